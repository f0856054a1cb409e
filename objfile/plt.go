package objfile

import (
	"debug/elf"
	"sort"

	"github.com/probee/probee/internal/safeelf"
)

// PLT stubs have no symbols: a sample or a walk that lands in one (a call
// on its way to a shared library's function) would show module+0xOFF.
// Like perf and objdump, probee names them "function@plt", from the
// relocations of .rela.plt, whose order is the stubs' order. They are
// kept apart from Funcs: they name frames, never probe targets (a glob
// like 'malloc*' must not match "malloc@plt").

// pltEntrySize is the size of an x86-64 PLT stub (.plt and .plt.sec).
const pltEntrySize = 16

// pltStubs returns "name@plt" symbols for f's PLT stubs, sorted by
// address; nil for other machines or when the tables are malformed.
func pltStubs(t *sectionTables) []Symbol {
	f := t.f
	rela := f.Section(".rela.plt")
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 || rela == nil {
		return nil
	}
	base, first, limit, ok := pltLayout(f)
	if !ok {
		return nil
	}
	names, ok := t.symbolNames(rela.Link)
	data, dok := sectionData(rela)
	if !ok || !dok {
		return nil
	}
	var out []Symbol
	for i := 0; (i+1)*24 <= len(data); i++ {
		info := f.ByteOrder.Uint64(data[i*24+8:])
		addr := base + uint64(first+i)*pltEntrySize
		if addr+pltEntrySize > limit {
			break
		}
		if sym := info >> 32; elf.R_X86_64(info&0xffffffff) == elf.R_X86_64_JMP_SLOT && sym < uint64(len(names)) && names[sym] != "" {
			out = append(out, Symbol{Name: names[sym] + "@plt", Addr: addr, Size: pltEntrySize})
		}
	}
	return out
}

// pltLayout returns where stub i lives: base + (first+i)*16, below limit.
// With IBT (-fcf-protection) the stubs are in .plt.sec from its start;
// otherwise in .plt after the resolver's entry (PLT0).
func pltLayout(f *elf.File) (base uint64, first int, limit uint64, ok bool) {
	if s := f.Section(".plt.sec"); s != nil {
		return s.Addr, 0, s.Addr + s.Size, true
	}
	if s := f.Section(".plt"); s != nil {
		return s.Addr, 1, s.Addr + s.Size, true
	}
	return 0, 0, 0, false
}

// symbolNames returns the names of the symbol table at section index
// link, by symbol index ("" where unreadable).
func (t *sectionTables) symbolNames(link uint32) ([]string, bool) {
	size := safeelf.SymSize(t.f)
	if link == 0 || int(link) >= len(t.f.Sections) || size == 0 {
		return nil, false
	}
	sec := t.f.Sections[link]
	data, ok := sectionData(sec)
	strs, sok := t.stringTable(sec.Link)
	if !ok || !sok {
		return nil, false
	}
	names := make([]string, len(data)/size)
	for i := range names {
		r := safeelf.DecodeSym(t.f, data[i*size:(i+1)*size])
		names[i], _ = symString(strs, uint64(r.Name))
	}
	return names, true
}

// pltAt returns the PLT stub containing addr, or nil.
func (o *Object) pltAt(addr uint64) *Symbol {
	i := sort.Search(len(o.plt), func(i int) bool { return o.plt[i].Addr+o.plt[i].Size > addr })
	if i < len(o.plt) && o.plt[i].Addr <= addr {
		return &o.plt[i]
	}
	return nil
}
