package objfile

import (
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
	"github.com/probee/probee/internal/parallel"
)

// nameForms are the two demangled forms of one symbol.
type nameForms struct{ full, short string }

// nameCache holds the demangled names of an Object's functions, each
// computed when first needed (a demangled or regex matcher that the
// prefilter lets through, a symbolized frame, a -v or --json listing).
// Demangling every symbol up front took two thirds of listing libLLVM,
// and most runs need few names or none. Copies of an Object share it.
type nameCache struct {
	mu sync.Mutex
	m  map[int]nameForms
}

// DemangledName returns the full and short demangled names of o.Funcs[i],
// "" when the name is not mangled (see DemangleName), demangling it on
// first use only: a cache shared by o's copies keeps the names.
func (o *Object) DemangledName(i int) (full, short string) {
	name := o.Funcs[i].Name
	c := o.names
	if !IsMangled(name) || c == nil {
		return DemangleName(name)
	}
	c.mu.Lock()
	d, ok := c.m[i]
	c.mu.Unlock()
	if ok {
		return d.full, d.short
	}
	d.full, d.short = DemangleName(name)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[int]nameForms{}
	}
	c.m[i] = d
	c.mu.Unlock()
	return d.full, d.short
}

// WarmNames demangles o.Funcs[i] for every i in idx into the cache, on
// all CPUs: a pattern the prefilter cannot narrow ("*::operator[]*")
// demangles every name of the object.
func (o *Object) WarmNames(idx []int) {
	parallel.For(len(idx), 256, func(k int) { o.DemangledName(idx[k]) })
}

// IsMangled reports whether raw looks like a C++ (_Z) or Rust v0 (_R)
// symbol, the names DemangleName tries.
func IsMangled(raw string) bool {
	return strings.HasPrefix(raw, "_Z") || strings.HasPrefix(raw, "_R")
}

// DemangleName returns the full demangled name (Rust hashes dropped) and
// the name without its parameter list; both are "" for names that are not
// C++ (_Z) or Rust (_ZN...17h<hash>E legacy, _R v0) symbols.
func DemangleName(raw string) (full, short string) {
	if !IsMangled(raw) {
		return "", ""
	}
	full, err := demangle.ToString(raw)
	if err != nil {
		return "", ""
	}
	short, err = demangle.ToString(raw, demangle.NoParams, demangle.NoClones)
	if err != nil {
		short = full
	}
	if strings.HasPrefix(raw, "_R") {
		full, short = rustInherent(full), rustInherent(short)
	}
	return full, short
}

// rustInherent rewrites v0's "<crate::Type>::method" for inherent methods
// as "crate::Type::method", the legacy spelling, so one pattern matches
// both manglings. Trait impls ("<T as Trait>::m") are left alone.
func rustInherent(s string) string {
	if !strings.HasPrefix(s, "<") {
		return s
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				inner := s[1:i]
				if strings.Contains(inner, " as ") || !strings.HasPrefix(s[i+1:], "::") {
					return s
				}
				return inner + s[i+1:]
			}
		}
	}
	return s
}

// isFragment reports whether raw names a piece split off another function
// (gcc's hot/cold splitting, BOLT's .warm and .cold fragments as in rustc's
// librustc_driver, partial inlining), not an entry point.
func isFragment(raw string) bool {
	for _, suffix := range []string{".cold", ".warm"} {
		if i := strings.Index(raw, suffix); i > 0 {
			rest := raw[i+len(suffix):]
			if rest == "" || rest[0] == '.' {
				return true
			}
		}
	}
	return strings.Contains(raw, ".part.")
}

// Demangle returns the name a frame of symbol raw gets: its full
// demangled form, or raw when it is not a C++ or Rust symbol. Tools that
// compare probee's stacks with another profiler's (tests/bench/stackcmp)
// demangle the other's raw names with it, so that both are spelled alike.
func Demangle(raw string) string {
	if full, _ := DemangleName(raw); full != "" {
		return full
	}
	return raw
}
