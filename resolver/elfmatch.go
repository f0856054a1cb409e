package resolver

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// matchObject appends to ts one target per address of o where some symbol
// matches m. Matches are found first, so ts grows once (an AttachPoint is big,
// and listing libLLVM makes 34000).
func matchObject(ts []AttachPoint, o *objfile.Object, m *nameMatcher, spec probespec.Spec) ([]AttachPoint, error) {
	type hit struct{ group, best int }
	var hits []hit
	m.warm(o)
	for i := 0; i < len(o.Funcs); {
		j := i + 1
		for j < len(o.Funcs) && o.Funcs[j].Addr == o.Funcs[i].Addr {
			j++
		}
		best := -1
		for k := i; k < j; k++ {
			if m.matchSymbol(o, k) && (best < 0 || objfile.BetterName(&o.Funcs[k], &o.Funcs[best])) {
				best = k
			}
		}
		if best >= 0 {
			hits = append(hits, hit{i, best})
		}
		i = j
	}
	first := len(ts)
	ts = slices.Grow(ts, len(hits))
	for _, h := range hits {
		j := h.group + 1
		for j < len(o.Funcs) && o.Funcs[j].Addr == o.Funcs[h.group].Addr {
			j++
		}
		t := funcTarget(o, o.Funcs[h.group:j], h.best-h.group, spec)
		if spec.Offset > 0 && spec.Offset >= t.Size {
			return nil, offsetError(t, spec.Offset, o)
		}
		ts = append(ts, t)
	}
	versionNames(ts[first:])
	return ts, nil
}

// versionNames tells apart targets of one object that would print with the
// same name: symbol versions (memcpy@GLIBC_2.2.5, the old compat entry, and
// memcpy@@GLIBC_2.14, the default) are two addresses. The default version
// keeps the plain name; the others take their versioned alias.
func versionNames(ts []AttachPoint) {
	// Only targets with a versioned alias of their name can be renamed:
	// count names for those alone (libLLVM has 34000 targets, none).
	var count map[string]int
	for i := range ts {
		if versionedAlias(&ts[i]) >= 0 {
			if count == nil {
				count = map[string]int{}
			}
			count[ts[i].Symbol] = 0
		}
	}
	if count == nil {
		return
	}
	for _, t := range ts {
		if n, ok := count[t.Symbol]; ok {
			count[t.Symbol] = n + 1
		}
	}
	for i := range ts {
		t := &ts[i]
		if count[t.Symbol] < 2 {
			continue
		}
		if k := versionedAlias(t); k >= 0 {
			t.Aliases[k], t.Symbol = t.Symbol, t.Aliases[k]
		}
	}
}

// versionedAlias returns the index of the first alias of t that is its
// name with a non-default version (name@VER, not name@@VER), or -1.
func versionedAlias(t *AttachPoint) int {
	for k, a := range t.Aliases {
		base, ver, ok := strings.Cut(a, "@")
		if ok && base == t.Symbol && !strings.HasPrefix(ver, "@") {
			return k
		}
	}
	return -1
}

func offsetError(t AttachPoint, off uint64, o *objfile.Object) error {
	if t.Size == 0 {
		return fmt.Errorf("offset 0x%x into %s in %s: the function's size is unknown, so the offset cannot be checked: probe its entry", off, t.Symbol, filepath.Base(o.Path))
	}
	return fmt.Errorf("offset 0x%x is outside %s (size 0x%x) in %s: give an offset below the size", off, t.Symbol, t.Size, filepath.Base(o.Path))
}

// funcTarget builds the AttachPoint for symbol group[best] of o and its
// aliases.
func funcTarget(o *objfile.Object, group []objfile.Symbol, best int, spec probespec.Spec) AttachPoint {
	s := group[best]
	t := AttachPoint{
		Kind: probespec.Uprobe, Ret: spec.Ret, Path: o.Path, BuildID: o.BuildID,
		Symbol: s.Name, Address: s.Addr, Offset: spec.Offset,
		SymbolFrom: o.Path, Go: o.Go, Unwinds: o.Unwinds,
	}
	if s.FromDebugFile() {
		t.SymbolFrom = o.DebugFile
	}
	for k, a := range group {
		t.Size = max(t.Size, a.Size)
		if k != best {
			t.Aliases = append(t.Aliases, a.Name)
		}
	}
	t.FileOffset, _ = o.FileOffset(s.Addr)
	return t
}

// objectNames lists the names suggestions are drawn from: raw names, and
// demangled short names for demangled patterns.
func objectNames(objs []*objfile.Object, kind probespec.MatcherKind) []string {
	var out []string
	for _, o := range objs {
		for i, s := range o.Funcs {
			if kind == probespec.MatchDemangled {
				if _, short := o.DemangledName(i); short != "" {
					out = append(out, short)
					continue
				}
			}
			out = append(out, s.Name)
		}
	}
	return out
}
