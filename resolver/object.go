package resolver

import (
	"bytes"
	"cmp"
	"debug/elf"
	"io"
	"slices"
	"strings"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
)

// Symbol source files, in increasing order of how far we had to look.
const (
	fromDynsym = iota
	fromSymtab
	fromDebug
)

// Symbol is one function symbol of an Object.
type Symbol struct {
	Name      string // raw (mangled) name
	Demangled string // full demangled name, "" when not mangled
	Short     string // demangled without parameters, "" when not mangled
	Addr      uint64 // st_value
	Size      uint64
	Global    bool // STB_GLOBAL or STB_WEAK
	Fragment  bool // .cold / .part.N piece of another function
	from      uint8
}

// Object is the symbol view of one ELF file: its functions, sorted by
// address, and what is needed to turn addresses into file offsets.
type Object struct {
	Path      string // the file as opened
	BuildID   string // hex, "" when the file has none
	DebugFile string // separate debug file whose symbols were merged, or ""
	Soname    string
	Needed    []string
	Rpath     []string
	Runpath   []string
	Interp    string
	Funcs     []Symbol // sorted by Addr, then Name

	loads     []safeelf.Segment
	debuglink string
	dwarf     *lazyDWARF // read on first use; shared by the copies Index makes
}

// ErrNotELF is returned for files that are not ELF objects (linker
// scripts such as libc.so, text files): callers skip them.
var ErrNotELF = safeelf.ErrNotELF

// LoadObject reads the function symbols of the ELF file at path. debugRoot,
// when not "", is the directory holding separate debug files
// (normally /usr/lib/debug).
func LoadObject(path, debugRoot string) (*Object, error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readObject(path, f.File, debugRoot)
}

// NewObject reads the function symbols from r (no debug-file lookup). It is
// what the fuzz target drives.
func NewObject(name string, r io.ReaderAt) (*Object, error) {
	f, err := safeelf.NewFile(name, r)
	if err != nil {
		return nil, err
	}
	return readObject(name, f, "")
}

// readObject reads f's symbols, and those of its debug file under
// debugRoot when that is not "", behind the panic guard.
func readObject(name string, f *elf.File, debugRoot string) (*Object, error) {
	var o *Object
	err := safeelf.Guard(name, func() (e error) { o, e = newObject(name, f); return e })
	if err != nil {
		return nil, err
	}
	if debugRoot != "" {
		o.mergeDebugFile(debugRoot)
	}
	if err := safeelf.Guard(name, func() error { o.finish(); return nil }); err != nil {
		return nil, err
	}
	return o, nil
}

func newObject(path string, f *elf.File) (*Object, error) {
	o := &Object{Path: path, BuildID: elfnote.BuildID(f), loads: safeelf.Loads(f), Interp: interpOf(f),
		dwarf: &lazyDWARF{}}
	o.readDynamic(f)
	o.debuglink = debuglink(f)
	dyn, _ := f.DynamicSymbols()
	o.addSymbols(f, dyn, fromDynsym)
	tab, _ := f.Symbols()
	o.addSymbols(f, tab, fromSymtab)
	return o, nil
}

// interpOf returns f's program interpreter (PT_INTERP), "" when static.
func interpOf(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return readInterp(p)
		}
	}
	return ""
}

func readInterp(p *elf.Prog) string {
	if p.Filesz > 4096 {
		return ""
	}
	b := make([]byte, p.Filesz)
	if _, err := p.ReadAt(b, 0); err != nil {
		return ""
	}
	return string(bytes.TrimRight(b, "\x00"))
}

func (o *Object) readDynamic(f *elf.File) {
	if s, _ := f.DynString(elf.DT_SONAME); len(s) > 0 {
		o.Soname = s[0]
	}
	o.Needed, _ = f.DynString(elf.DT_NEEDED)
	for _, s := range dynStrings(f, elf.DT_RPATH) {
		o.Rpath = append(o.Rpath, strings.Split(s, ":")...)
	}
	for _, s := range dynStrings(f, elf.DT_RUNPATH) {
		o.Runpath = append(o.Runpath, strings.Split(s, ":")...)
	}
}

func dynStrings(f *elf.File, tag elf.DynTag) []string {
	s, _ := f.DynString(tag)
	return s
}

// addSymbols keeps defined functions with code.
func (o *Object) addSymbols(f *elf.File, syms []elf.Symbol, from uint8) {
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			continue
		}
		if s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" || !execSection(f, s.Section) {
			continue
		}
		b := elf.ST_BIND(s.Info)
		o.Funcs = append(o.Funcs, Symbol{
			Name: s.Name, Addr: s.Value, Size: s.Size, from: from,
			Global: b == elf.STB_GLOBAL || b == elf.STB_WEAK,
		})
	}
}

func execSection(f *elf.File, idx elf.SectionIndex) bool {
	if idx == elf.SHN_ABS {
		return false
	}
	if int(idx) >= len(f.Sections) {
		return false
	}
	return f.Sections[idx].Flags&elf.SHF_EXECINSTR != 0
}

// finish sorts, deduplicates (name, addr) pairs and demangles.
func (o *Object) finish() {
	slices.SortFunc(o.Funcs, func(a, b Symbol) int {
		if c := cmp.Compare(a.Addr, b.Addr); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.from, b.from)
	})
	out := o.Funcs[:0]
	for i, s := range o.Funcs {
		if i > 0 && s.Addr == out[len(out)-1].Addr && s.Name == out[len(out)-1].Name {
			if s.Size > out[len(out)-1].Size {
				out[len(out)-1].Size = s.Size
			}
			continue
		}
		s.Demangled, s.Short = demangleName(s.Name)
		s.Fragment = isFragment(s.Name)
		out = append(out, s)
	}
	o.Funcs = out
}

// FileOffset converts a virtual address (st_value) into the offset in the
// file, which is what the kernel's uprobe API takes. ok is false when no
// PT_LOAD segment holds the address.
func (o *Object) FileOffset(addr uint64) (uint64, bool) {
	seg, ok := safeelf.Find(o.loads, addr)
	return seg.FileOffset(addr), ok
}

// VirtAddr converts a file offset (from /proc/PID/maps arithmetic) into a
// virtual address of the ELF file.
func (o *Object) VirtAddr(off uint64) (uint64, bool) {
	seg, ok := safeelf.FindOffset(o.loads, off)
	if !ok {
		return 0, false
	}
	return seg.VirtAddr(off), true
}
