package resolver

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/probee/probee/probespec"
)

// matchObject appends to ts one target per address of o where some symbol
// matches m. Matches are found first, so ts grows once (a Target is big,
// and listing libLLVM makes 34000).
func matchObject(ts []Target, o *Object, m *nameMatcher, spec probespec.Spec) ([]Target, error) {
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
			if m.matchSymbol(o, k) && (best < 0 || betterName(&o.Funcs[k], &o.Funcs[best])) {
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
		t := o.target(o.Funcs[h.group:j], h.best-h.group, spec)
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
func versionNames(ts []Target) {
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
func versionedAlias(t *Target) int {
	for k, a := range t.Aliases {
		base, ver, ok := strings.Cut(a, "@")
		if ok && base == t.Symbol && !strings.HasPrefix(ver, "@") {
			return k
		}
	}
	return -1
}

func offsetError(t Target, off uint64, o *Object) error {
	if t.Size == 0 {
		return fmt.Errorf("offset 0x%x into %s in %s: the function's size is unknown, so the offset cannot be checked: probe its entry", off, t.Symbol, filepath.Base(o.Path))
	}
	return fmt.Errorf("offset 0x%x is outside %s (size 0x%x) in %s: give an offset below the size", off, t.Symbol, t.Size, filepath.Base(o.Path))
}

// target builds the Target for symbol group[best] and its aliases.
func (o *Object) target(group []Symbol, best int, spec probespec.Spec) Target {
	s := group[best]
	t := Target{
		Kind: probespec.Uprobe, Ret: spec.Ret, Path: o.Path, BuildID: o.BuildID,
		Symbol: s.Name, Address: s.Addr, Offset: spec.Offset,
		SymbolFrom: o.Path, Go: o.Go, Unwinds: o.Unwinds,
	}
	if s.from == fromDebug {
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

// betterName orders alias names: a symbol with a size first (a zero-size
// symbol at a function's address is a label, or a function whose body the
// compiler dropped, as llvm_unreachable's in libclang-cpp's
// TemplateDeclInstantiator::VisitDecl at Sema::SubstDecl), then global,
// then fewer leading underscores, then shorter, then alphabetical.
func betterName(a, b *Symbol) bool {
	if (a.Size > 0) != (b.Size > 0) {
		return a.Size > 0
	}
	if a.Global != b.Global {
		return a.Global
	}
	ua, ub := leadingUnderscores(a.Name), leadingUnderscores(b.Name)
	if ua != ub {
		return ua < ub
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.Name < b.Name
}

func leadingUnderscores(s string) int { return len(s) - len(strings.TrimLeft(s, "_")) }

// objectNames lists the names suggestions are drawn from: raw names, and
// demangled short names for demangled patterns.
func objectNames(objs []*Object, kind probespec.MatcherKind) []string {
	var out []string
	for _, o := range objs {
		for i, s := range o.Funcs {
			if kind == probespec.MatchDemangled {
				if _, short := o.demangled(i); short != "" {
					out = append(out, short)
					continue
				}
			}
			out = append(out, s.Name)
		}
	}
	return out
}

// funcAt returns the index of the function symbol containing addr, or -1.
func (o *Object) funcAt(addr uint64) int {
	lo, hi := 0, len(o.Funcs)
	for lo < hi {
		mid := (lo + hi) / 2
		if o.Funcs[mid].Addr <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	// Walk back over the aliases at the greatest address <= addr, looking
	// for one whose size covers addr.
	for i := lo - 1; i >= 0 && i >= lo-64; i-- {
		s := &o.Funcs[i]
		if addr-s.Addr < s.Size || (s.Size == 0 && addr == s.Addr) {
			return o.bestAlias(i)
		}
	}
	return -1
}

// bestAlias returns the preferred name among the symbols at Funcs[i].Addr.
func (o *Object) bestAlias(i int) int {
	a := o.Funcs[i].Addr
	lo := i
	for lo > 0 && o.Funcs[lo-1].Addr == a {
		lo--
	}
	best := lo
	for k := lo; k < len(o.Funcs) && o.Funcs[k].Addr == a; k++ {
		if betterName(&o.Funcs[k], &o.Funcs[best]) {
			best = k
		}
	}
	return best
}
