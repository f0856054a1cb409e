package resolver

import (
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/probee/probee/internal/elfnote"
)

// Symbol source files, in increasing order of how far we had to look.
const (
	fromDynsym = iota
	fromSymtab
	fromDebug
)

// Symbol is one function symbol of an Object.
type Symbol struct {
	Name     string // raw (mangled) name; Object.demangled has the demangled forms
	Addr     uint64 // st_value
	Size     uint64
	Global   bool // STB_GLOBAL or STB_WEAK
	Fragment bool // .cold / .part.N piece of another function
	from     uint8
}

// segment is one PT_LOAD program header.
type segment struct {
	vaddr, memsz, off, filesz uint64
	exec                      bool
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

	loads     []segment
	debuglink string
	names     *nameCache // demangled Funcs names, filled on demand
}

// ErrNotELF is returned for files that are not ELF objects (linker
// scripts such as libc.so, text files): callers skip them.
var ErrNotELF = errors.New("not an ELF file")

// safeELF runs fn, turning a panic inside debug/elf or debug/dwarf on
// hostile input into an error.
func safeELF(path string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed ELF file %s: %v", path, r)
		}
	}()
	return fn()
}

// openELF opens path with debug/elf behind the panic guard.
func openELF(path string) (*elf.File, *os.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var ident [elf.EI_NIDENT]byte
	if _, err := fh.ReadAt(ident[:4], 0); err != nil || string(ident[:4]) != elf.ELFMAG {
		fh.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNotELF)
	}
	var f *elf.File
	if n, _ := fh.ReadAt(ident[:], 0); n < len(ident) {
		err = fmt.Errorf("read ELF %s: file is truncated or corrupt (it ends before a header says): rebuild or copy it again", path)
	} else if err = checkIdent(path, ident); err == nil {
		err = safeELF(path, func() (e error) { f, e = elf.NewFile(fh); return e })
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("read ELF %s: file is truncated or corrupt (it ends before a header says): rebuild or copy it again", path)
		} else if err != nil {
			err = fmt.Errorf("read ELF %s: %w", path, err)
		}
	}
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return f, fh, nil
}

// checkIdent rejects the ELF classes and byte orders probee cannot trace
// (uprobes and stacks here are 64-bit little-endian) with a clear message,
// before debug/elf reports them as odd field values.
func checkIdent(path string, ident [elf.EI_NIDENT]byte) error {
	class, data := elf.Class(ident[elf.EI_CLASS]), elf.Data(ident[elf.EI_DATA])
	switch {
	case class == elf.ELFCLASS32:
		return fmt.Errorf("%s: 32-bit ELF file (ELFCLASS32): probee traces 64-bit binaries only", path)
	case class != elf.ELFCLASS64:
		return fmt.Errorf("%s: corrupt ELF header: unknown class %d", path, ident[elf.EI_CLASS])
	case data == elf.ELFDATA2MSB:
		return fmt.Errorf("%s: big-endian ELF file (ELFDATA2MSB): probee traces little-endian binaries only", path)
	case data != elf.ELFDATA2LSB:
		return fmt.Errorf("%s: corrupt ELF header: unknown byte order %d", path, ident[elf.EI_DATA])
	}
	return nil
}

// LoadObject reads the function symbols of the ELF file at path. debugRoot,
// when not "", is the directory holding separate debug files
// (normally /usr/lib/debug).
func LoadObject(path, debugRoot string) (*Object, error) {
	f, fh, err := openELF(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var o *Object
	err = safeELF(path, func() (e error) { o, e = newObject(path, f); return e })
	if err != nil {
		return nil, err
	}
	if debugRoot != "" {
		o.mergeDebugFile(debugRoot)
	}
	if err := safeELF(path, func() error { o.finish(); return nil }); err != nil {
		return nil, err
	}
	return o, nil
}

// NewObject reads the function symbols from r (no debug-file lookup). It is
// what the fuzz target drives.
func NewObject(name string, r io.ReaderAt) (*Object, error) {
	var o *Object
	err := safeELF(name, func() error {
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		o, err = newObject(name, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := safeELF(name, func() error { o.finish(); return nil }); err != nil {
		return nil, err
	}
	return o, nil
}

func newObject(path string, f *elf.File) (*Object, error) {
	o := &Object{Path: path, BuildID: elfnote.BuildID(f), loads: loadSegments(f), Interp: interpOf(f), names: &nameCache{}}
	t := newSectionTables(f)
	o.readDynamic(t)
	o.debuglink = debuglink(f)
	o.addSymbols(t, elf.SHT_DYNSYM, fromDynsym)
	o.addSymbols(t, elf.SHT_SYMTAB, fromSymtab)
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
// until a name is needed (Object.demangled).
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
}

// FileOffset converts a virtual address (st_value) into the offset in the
// file, which is what the kernel's uprobe API takes. ok is false when no
// PT_LOAD segment holds the address.
func (o *Object) FileOffset(addr uint64) (uint64, bool) {
	seg, ok := segmentOf(o.loads, addr)
	return addr - seg.vaddr + seg.off, ok
}

// loadSegments lists f's PT_LOAD segments.
func loadSegments(f *elf.File) []segment {
	var loads []segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, segment{p.Vaddr, p.Memsz, p.Off, p.Filesz, p.Flags&elf.PF_X != 0})
		}
	}
	return loads
}

// segmentOf returns the segment whose file-backed part holds addr.
func segmentOf(loads []segment, addr uint64) (segment, bool) {
	for _, s := range loads {
		if addr >= s.vaddr && addr-s.vaddr < s.filesz {
			return s, true
		}
	}
	return segment{}, false
}

// VirtAddr converts a file offset (from /proc/PID/maps arithmetic) into a
// virtual address of the ELF file.
func (o *Object) VirtAddr(off uint64) (uint64, bool) {
	for _, s := range o.loads {
		if off >= s.off && off-s.off < s.filesz {
			return off - s.off + s.vaddr, true
		}
	}
	return 0, false
}
