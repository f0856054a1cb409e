package objfile

import (
	"strings"
	"sync"
)

// FromDebugFile reports whether s was read from its Object's separate
// debug file (Object.DebugFile), not from the file itself.
func (s Symbol) FromDebugFile() bool { return s.from == fromDebug }

// FuncAt returns the index in Funcs of the function symbol containing
// addr, or -1; of several symbols at one address, the preferred name
// (BetterName).
func (o *Object) FuncAt(addr uint64) int {
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
		if BetterName(&o.Funcs[k], &o.Funcs[best]) {
			best = k
		}
	}
	return best
}

// BetterName orders alias names: a symbol with a size first (a zero-size
// symbol at a function's address is a label, or a function whose body the
// compiler dropped, as llvm_unreachable's in libclang-cpp's
// TemplateDeclInstantiator::VisitDecl at Sema::SubstDecl), then global,
// then fewer leading underscores, then shorter, then alphabetical.
func BetterName(a, b *Symbol) bool {
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

// SymbolAt returns the symbol that names the virtual address va of o, and
// the name a frame there shows: a PLT stub ("name@plt"), else the function
// holding va (its name demangled when it is mangled), else a code label
// (labels.go). s is nil when none covers va.
func (o *Object) SymbolAt(va uint64) (s *Symbol, name string) {
	if s := o.pltAt(va); s != nil {
		return s, s.Name
	}
	if i := o.FuncAt(va); i >= 0 {
		s := &o.Funcs[i]
		if full, _ := o.DemangledName(i); full != "" {
			return s, full
		}
		return s, s.Name
	}
	if s := o.labelAt(va); s != nil {
		return s, s.Name
	}
	return nil, ""
}

// ColdParts returns the .cold parts of the function named name (gcc's
// "name.cold", "name.cold.1").
func (o *Object) ColdParts(name string) []Symbol {
	if o.frags == nil {
		return nil
	}
	o.frags.once.Do(func() {
		o.frags.cold = map[string][]Symbol{}
		for _, s := range o.Funcs {
			if i := strings.Index(s.Name, ".cold"); i > 0 && s.Fragment {
				o.frags.cold[s.Name[:i]] = append(o.frags.cold[s.Name[:i]], s)
			}
		}
	})
	return o.frags.cold[name]
}

// fragIndex maps function names to their .cold parts, built on first use
// and shared by an Object's copies (Index.view).
type fragIndex struct {
	once sync.Once
	cold map[string][]Symbol
}
