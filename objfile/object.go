package objfile

import (
	"bytes"
	"cmp"
	"debug/elf"
	"io"
	"slices"
	"strings"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// Symbol source files, in increasing order of how far we had to look.
const (
	fromDynsym = iota
	fromSymtab
	fromPclntab // a Go binary without .symtab (gofuncs.go)
	fromDebug
)

// Symbol is one function symbol of an Object.
type Symbol struct {
	Name     string // raw (mangled) name; Object.DemangledName has the demangled forms
	Addr     uint64 // st_value
	Size     uint64
	Global   bool // STB_GLOBAL or STB_WEAK
	Fragment bool // .cold / .part.N piece of another function
	from     uint8
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
	Go        bool     // linked by the Go toolchain (safeelf.IsGo)
	Unwinds   bool     // throws or passes on C++ exceptions or Rust panics (unwinds.go)
	Funcs     []Symbol // sorted by Addr, then Name

	id        fileid.ID // the Index's key (zero for objects read outside one)
	loads     []safeelf.Segment
	info      safefile.Info // of the file read (zero for NewObject's)
	debug     fileRef       // the debug file DebugFile names
	debuglink string
	dwarf     *lazyDWARF // read on first use; shared by the copies Index makes
	names     *nameCache // demangled Funcs names, filled on demand; shared too
	frags     *fragIndex // .cold parts by function name, built on demand; shared too
	plt       []Symbol   // "name@plt" stubs (plt.go), by address: frame names only
	labels    []Symbol   // code labels (labels.go), by address: frame names only
}

// ErrNotELF is returned for files that are not ELF objects (linker
// scripts such as libc.so, text files): callers skip them.
var ErrNotELF = safeelf.ErrNotELF

// LoadObject reads the function symbols of the ELF file at path. debugRoot,
// when not "", is the directory holding separate debug files
// (normally /usr/lib/debug).
func LoadObject(path, debugRoot string) (*Object, error) {
	src, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return loadObject(src, debugRoot)
}

// loadObject reads the function symbols of an opened ELF file (the caller
// closes it).
func loadObject(src *safefile.File, debugRoot string) (*Object, error) {
	f, err := safeelf.NewFile(src.Name, src)
	if err != nil {
		return nil, err
	}
	o, err := readObject(src.Name, f, src.Info, debugRoot)
	return o, err
}

// NewObject reads the function symbols from r (no debug-file lookup). It is
// what the fuzz target drives.
func NewObject(name string, r io.ReaderAt) (*Object, error) {
	f, err := safeelf.NewFile(name, r)
	if err != nil {
		return nil, err
	}
	return readObject(name, f, safefile.Info{}, "")
}

// readObject reads f's symbols, and those of its debug file under
// debugRoot when that is not "", behind the panic guard.
func readObject(name string, f *elf.File, info safefile.Info, debugRoot string) (*Object, error) {
	var o *Object
	err := safeelf.Guard(name, func() (e error) { o, e = newObject(name, f); return e })
	if err != nil {
		return nil, err
	}
	o.info = info
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
		Go: safeelf.IsGo(f), dwarf: &lazyDWARF{}, names: &nameCache{}, frags: &fragIndex{}}
	t := newSectionTables(f)
	o.readDynamic(t)
	o.debuglink = debuglink(f)
	o.addSymbols(t, elf.SHT_DYNSYM, fromDynsym)
	if !o.addSymbols(t, elf.SHT_SYMTAB, fromSymtab) && o.Go {
		o.addGoFuncs(f)
	}
	o.Unwinds = o.unwinds()
	o.plt = pltStubs(t)
	if l, ok := entryLabel(f, o); ok {
		o.labels = append(o.labels, l)
	}
	if l, ok := sigreturnLabel(f, o); ok {
		o.labels = append(o.labels, l)
	}
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

func (o *Object) readDynamic(t *sectionTables) {
	if s := t.dynStrings(elf.DT_SONAME); len(s) > 0 {
		o.Soname = s[0]
	}
	o.Needed = t.dynStrings(elf.DT_NEEDED)
	for _, s := range t.dynStrings(elf.DT_RPATH) {
		o.Rpath = append(o.Rpath, strings.Split(s, ":")...)
	}
	for _, s := range t.dynStrings(elf.DT_RUNPATH) {
		o.Runpath = append(o.Runpath, strings.Split(s, ":")...)
	}
}

// finish sorts and deduplicates (name, addr) pairs; demangling waits
// until a name is needed (Object.DemangledName).
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
		s.Fragment = isFragment(s.Name)
		out = append(out, s)
	}
	o.Funcs = out
	o.finishLabels()
}

// FileOffset converts a virtual address (st_value) into the offset in the
// file, which is what the kernel's uprobe API takes. ok is false when no
// PT_LOAD segment holds the address.
func (o *Object) FileOffset(addr uint64) (uint64, bool) {
	seg, ok := safeelf.Find(o.loads, addr)
	return seg.FileOffset(addr), ok
}

// NumSymbols is how many symbols o holds: its functions, PLT stubs and
// code labels (what an Index counts against MaxSymbols).
func (o *Object) NumSymbols() int { return len(o.Funcs) + len(o.plt) + len(o.labels) }

// ID is o's file identity, the key of the Index that read it
// (internal/fileid); zero for an object read outside an Index. The copies
// an Index makes of one file (views at other paths) share it, and their
// symbols, names and DWARF.
func (o *Object) ID() fileid.ID { return o.id }

// VirtAddr converts a file offset (from /proc/PID/maps arithmetic) into a
// virtual address of the ELF file.
func (o *Object) VirtAddr(off uint64) (uint64, bool) {
	seg, ok := safeelf.FindOffset(o.loads, off)
	if !ok {
		return 0, false
	}
	return seg.VirtAddr(off), true
}
