package gopclntab

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/probee/probee/internal/safeelf"
)

// Table is a Go binary's .gopclntab, read for the functions, source lines
// and inlined calls of its addresses, as the runtime reads it for a
// traceback: by the lookups of ftab.go and inline.go for a Go 1.20+
// table, by debug/gosym for older ones (legacy.go: no inlined calls).
type Table struct {
	bo     binary.ByteOrder
	legacy *gosym.Table // a table older than Go 1.20; nil for newer ones

	// The sub-tables of a Go 1.20+ table.
	names, cutab, files, pctab, pcln []byte
	text                             uint64 // the function offsets' base (runtime.text)
	nfunc                            uint64
	quantum                          uint64          // the instruction size unit of pc deltas
	gofunc                           []byte          // the functions' data from go:func.* on; nil: no inline trees
	abi0                             map[uint64]bool // entries of the functions named "name.abi0" (abi.go)
	size                             int             // bytes read from the file (Bytes)
}

// Bytes is how many bytes of the file t holds: its section, and the
// functions' data read from another section.
func (t *Table) Bytes() int { return t.size }

// Frame is one source-level frame of an address: an inlined call, or the
// physical function holding the address (the last of a Frames result).
type Frame struct {
	Func   string
	File   string // "" and 0 when the table has no line there
	Line   int
	Inline bool
}

// Open reads the .gopclntab of Go binary f.
func Open(f *elf.File) (*Table, error) {
	pcln := f.Section(".gopclntab")
	if pcln == nil || pcln.Type == elf.SHT_NOBITS {
		return nil, ErrNoTable
	}
	data, err := safeelf.SectionData("", pcln)
	if err != nil {
		return nil, fmt.Errorf("read .gopclntab: %w", err)
	}
	if err := checkCount(f, data); err != nil {
		return nil, err
	}
	m := findModule(f, pcln.Addr, data)
	t := &Table{bo: f.ByteOrder, text: m.text, size: len(data)}
	if !t.readHeader(data) {
		err = safeelf.Guard(".gopclntab", func() (err error) {
			t.legacy, err = gosym.NewTable(nil, gosym.NewLineTable(data, m.text))
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read .gopclntab: %w", err)
		}
		return t, nil
	}
	err = safeelf.Guard(".gopclntab", func() error {
		t.abi0 = t.abi0Names()
		switch at := t.findGofunc(m.after, dataReader(f)); {
		case at == 0:
		case at >= pcln.Addr && at-pcln.Addr < uint64(len(data)):
			t.gofunc = data[at-pcln.Addr:] // Go 1.26 puts go:func.* in .gopclntab
		default:
			t.gofunc = sectionFrom(f, at)
			t.size += len(t.gofunc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read .gopclntab: %w", err)
	}
	return t, nil
}

// Funcs returns the table's functions by ascending entry, those with an
// empty range or no name left out; none from a table found malformed.
func (t *Table) Funcs() (out []Func) {
	if t.legacy != nil {
		return t.legacyFuncs()
	}
	if safeelf.Guard(".gopclntab", func() error { out = t.funcs(); return nil }) != nil {
		return nil
	}
	return out
}

func (t *Table) funcs() []Func {
	n := t.nfuncs()
	out := make([]Func, 0, n)
	for i := range n {
		f, ok := t.function(i)
		if !ok || f.end <= f.entry {
			continue
		}
		if name, ok := t.baseName(f); ok {
			out = append(out, Func{Name: t.name(f.entry, name), Entry: f.entry, End: f.end})
		}
	}
	return out
}

// name returns the name of the function at entry, which baseName gave, as
// the linker writes it in .symtab: "name.abi0" for an ABI0 half (abi.go).
func (t *Table) name(entry uint64, name string) string {
	if t.abi0[entry] {
		return name + ".abi0"
	}
	return name
}

// symName returns a name of the table as the linker writes it in .symtab:
// the middle dot of a compiler-made name ("type:.eq.T·7") is a dot there.
func symName(name string) string {
	if strings.Contains(name, "·") {
		return strings.ReplaceAll(name, "·", ".")
	}
	return name
}

// Offsets in the header of a Go 1.20+ table (64-bit): the minimum
// instruction size, the function count, then the offsets of the function
// names, the compile units, the files, the pc-value tables and the
// function table from the header's start.
const (
	hdrQuantum   = 6
	hdrPtrSize   = 7
	hdrNfunc     = 8
	hdrFuncnames = 32
	hdrCutab     = 40
	hdrFiletab   = 48
	hdrPctab     = 56
	hdrPcln      = 64
	hdrSize      = 72
)

// readHeader sets the sub-tables of a Go 1.20+ table with 8-byte pointers;
// false for any other table.
func (t *Table) readHeader(data []byte) bool {
	if len(data) < hdrSize || t.bo.Uint32(data) != magic120 || data[hdrPtrSize] != 8 || data[hdrQuantum] == 0 {
		return false
	}
	at := func(off int) []byte {
		if o := t.bo.Uint64(data[off:]); o < uint64(len(data)) {
			return data[o:]
		}
		return nil
	}
	t.names, t.cutab, t.files = at(hdrFuncnames), at(hdrCutab), at(hdrFiletab)
	t.pctab, t.pcln = at(hdrPctab), at(hdrPcln)
	t.nfunc, t.quantum = t.bo.Uint64(data[hdrNfunc:]), uint64(data[hdrQuantum])
	return t.names != nil && t.cutab != nil && t.files != nil && t.pctab != nil && t.pcln != nil
}

// dataSection returns f's section holding addr: a loaded data section
// with contents, not code (a segment's flags do not tell: a system linker
// put .rodata in the text segment of local-extract, a Go 1.25 binary).
func dataSection(f *elf.File, addr uint64) (*elf.Section, bool) {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Flags&(elf.SHF_ALLOC|elf.SHF_EXECINSTR|elf.SHF_COMPRESSED) == elf.SHF_ALLOC &&
			addr >= s.Addr && addr-s.Addr < s.Size {
			return s, true
		}
	}
	return nil, false
}

// dataReader returns a reader of f's data sections by address.
func dataReader(f *elf.File) func(addr uint64, b []byte) bool {
	return func(addr uint64, b []byte) bool {
		s, ok := dataSection(f, addr)
		if !ok || s.Size-(addr-s.Addr) < uint64(len(b)) {
			return false
		}
		_, err := s.ReadAt(b, int64(addr-s.Addr))
		return err == nil
	}
}

// sectionFrom returns the bytes of f's data section holding addr, from
// addr to the section's end; nil when none holds it.
func sectionFrom(f *elf.File, addr uint64) []byte {
	s, ok := dataSection(f, addr)
	if !ok {
		return nil
	}
	b, err := safeelf.ReadSection("", s, addr-s.Addr, s.Size-(addr-s.Addr))
	if err != nil {
		return nil
	}
	return b
}
