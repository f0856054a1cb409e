package resolver

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// demangleName returns the full demangled name (Rust hashes dropped) and
// the name without its parameter list; both are "" for names that are not
// C++ (_Z) or Rust (_ZN...17h<hash>E legacy, _R v0) symbols.
func demangleName(raw string) (full, short string) {
	if !strings.HasPrefix(raw, "_Z") && !strings.HasPrefix(raw, "_R") {
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
// (gcc's hot/cold splitting and partial inlining), not an entry point.
func isFragment(raw string) bool {
	if i := strings.Index(raw, ".cold"); i > 0 {
		rest := raw[i+len(".cold"):]
		return rest == "" || rest[0] == '.'
	}
	return strings.Contains(raw, ".part.")
}
