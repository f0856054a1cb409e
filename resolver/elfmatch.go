package resolver

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/probee/probee/probespec"
)

// matchObject returns one target per address of o where some symbol
// matches m.
func matchObject(o *Object, m *nameMatcher, spec probespec.Spec) ([]Target, error) {
	var ts []Target
	m.warm(o)
	for i := 0; i < len(o.Funcs); {
		j := i + 1
		for j < len(o.Funcs) && o.Funcs[j].Addr == o.Funcs[i].Addr {
			j++
		}
		group := o.Funcs[i:j]
		best := -1
		for k := range group {
			if m.matchSymbol(o, i+k) && (best < 0 || betterName(&group[k], &group[best])) {
				best = k
			}
		}
		i = j
		if best < 0 {
			continue
		}
		t := o.target(group, best, spec)
		if spec.Offset > 0 && spec.Offset >= t.Size {
			return nil, offsetError(t, spec.Offset, o)
		}
		ts = append(ts, t)
	}
	versionNames(ts)
	return ts, nil
}

// versionNames tells apart targets of one object that would print with the
// same name: symbol versions (memcpy@GLIBC_2.2.5, the old compat entry, and
// memcpy@@GLIBC_2.14, the default) are two addresses. The default version
// keeps the plain name; the others take their versioned alias.
func versionNames(ts []Target) {
	count := map[string]int{}
	for _, t := range ts {
		count[t.Symbol]++
	}
	for i := range ts {
		t := &ts[i]
		if count[t.Symbol] < 2 {
			continue
		}
		for k, a := range t.Aliases {
			base, ver, ok := strings.Cut(a, "@")
			if ok && base == t.Symbol && !strings.HasPrefix(ver, "@") {
				t.Aliases[k], t.Symbol = t.Symbol, a
				break
			}
		}
	}
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
		SymbolFrom: o.Path,
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

// betterName orders alias names: global first, then fewer leading
// underscores, then shorter, then alphabetical.
func betterName(a, b *Symbol) bool {
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
