// Package hostile generates the crafted files of the hostile-input e2e
// suite (tests/e2e/hostile_suite_test.go): ELF, DWARF, CFI and note
// contents that a user other than root may map into a process a root
// probee traces, each made to attack one budget or check of the product
// (issue #44). It owns the files' layout and the claims they make; the
// suite's attacker (tests/fixtures/src/hostilemap.c) maps them, and writes
// the perf maps, which need its own addresses. Every function is
// deterministic and writes into the directory it is given; files whose
// attack is a size they claim rather than hold are sparse.
package hostile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
)

// StubOff is the file offset (and virtual address) of the stub every
// callable image holds: push rbp; mov rbp,rsp; call *rdi; pop rbp; ret.
// The attacker calls it with the next function's address (-c FILE:OFF), so
// the image is on the stacks probee samples and symbolizes.
const StubOff = 0x1000

// Stub is the stub's code.
var Stub = []byte{0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3}

// dataOff is where section contents start, after the stub's page.
const dataOff = 0x2000

var le = binary.LittleEndian

// Prog is a program header; a PT_LOAD of Filesz 0 covers the whole file.
type Prog struct {
	Type                      elf.ProgType
	Flags                     elf.ProgFlag
	Off, Vaddr, Filesz, Memsz uint64
}

// Section is a section header and its contents. Off 0 places Data after
// the sections before it, Off set at Off (past them); Size 0 is
// len(Data). A section with Off set and no Data is not written: the file
// is made long enough (sparse) to hold Off+Size.
type Section struct {
	Name        string
	Type        elf.SectionType
	Flags       elf.SectionFlag
	Addr        uint64
	Data        []byte
	Off, Size   uint64
	Link, Info  uint32
	Align, Entz uint64
}

// Image is a 64-bit little-endian x86-64 ET_DYN file: the ELF header,
// Progs, the stub at StubOff, the sections' contents, .shstrtab (index 1,
// when there are sections) and the section header table. More than
// 0xff00 sections use the extended numbering (e_shnum 0, the count in
// section 0's sh_size).
type Image struct {
	Progs    []Prog
	Sections []Section
	MinSize  int64 // the file is made at least this long (sparse)
}

// Index is the section header index Sections[i] gets.
func Index(i int) uint32 { return uint32(i + 2) }

// Bytes lays the image out; size is how long the file must be (at least
// len of the bytes).
func (im *Image) Bytes() (b []byte, size int64) {
	var body bytes.Buffer
	body.Write(make([]byte, dataOff))
	copy(body.Bytes()[StubOff:], Stub)
	size = im.MinSize
	offs := make([]uint64, len(im.Sections))
	for i, s := range im.Sections {
		if s.Off != 0 && s.Data == nil {
			offs[i] = s.Off
			size = max(size, int64(s.Off+s.size()))
			continue
		}
		if s.Off != 0 {
			body.Write(make([]byte, int(s.Off)-body.Len()))
		}
		body.Write(make([]byte, (8-body.Len()%8)%8))
		offs[i] = uint64(body.Len())
		body.Write(s.Data)
	}
	shstr, names := stringTable(im.Sections)
	shstrOff := uint64(body.Len())
	body.Write(shstr)
	shoff := uint64(0)
	if len(im.Sections) > 0 {
		body.Write(make([]byte, (8-body.Len()%8)%8))
		shoff = uint64(body.Len())
		body.Write(im.sectionHeaders(offs, names, shstrOff, uint64(len(shstr))))
	}
	b = body.Bytes()
	im.header(b, shoff, max(size, int64(len(b))))
	return b, max(size, int64(len(b)))
}

func (s Section) size() uint64 {
	if s.Size != 0 {
		return s.Size
	}
	return uint64(len(s.Data))
}

// stringTable is .shstrtab: each distinct name once, and where it is.
func stringTable(secs []Section) ([]byte, map[string]uint32) {
	tab := []byte("\x00.shstrtab\x00")
	names := map[string]uint32{".shstrtab": 1}
	for _, s := range secs {
		if _, ok := names[s.Name]; !ok {
			names[s.Name] = uint32(len(tab))
			tab = append(append(tab, s.Name...), 0)
		}
	}
	return tab, names
}

func (im *Image) sectionHeaders(offs []uint64, names map[string]uint32, strOff, strSize uint64) []byte {
	n := len(im.Sections) + 2
	sh := make([]byte, 64*n)
	if n >= int(elf.SHN_LORESERVE) {
		le.PutUint64(sh[32:], uint64(n)) // extended numbering
	}
	put := func(i int, name uint32, s Section, off uint64) {
		h := sh[64*i:]
		le.PutUint32(h, name)
		le.PutUint32(h[4:], uint32(s.Type))
		le.PutUint64(h[8:], uint64(s.Flags))
		le.PutUint64(h[16:], s.Addr)
		le.PutUint64(h[24:], off)
		le.PutUint64(h[32:], s.size())
		le.PutUint32(h[40:], s.Link)
		le.PutUint32(h[44:], s.Info)
		le.PutUint64(h[48:], max(s.Align, 1))
		le.PutUint64(h[56:], s.Entz)
	}
	put(1, names[".shstrtab"], Section{Type: elf.SHT_STRTAB, Size: strSize}, strOff)
	for i, s := range im.Sections {
		put(int(Index(i)), names[s.Name], s, offs[i])
	}
	return sh
}

// header writes the ELF header and program headers into b.
func (im *Image) header(b []byte, shoff uint64, size int64) {
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[32:], 64) // e_phoff
	le.PutUint64(b[40:], shoff)
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], uint16(len(im.Progs)))
	le.PutUint16(b[58:], 64)
	if n := len(im.Sections) + 2; shoff != 0 && n < int(elf.SHN_LORESERVE) {
		le.PutUint16(b[60:], uint16(n))
	}
	if shoff != 0 {
		le.PutUint16(b[62:], 1) // .shstrtab
	}
	for i, p := range im.Progs {
		h := b[64+56*i:]
		if p.Type == elf.PT_LOAD && p.Filesz == 0 {
			p.Filesz, p.Memsz = uint64(size), max(p.Memsz, uint64(size))
		}
		le.PutUint32(h, uint32(p.Type))
		le.PutUint32(h[4:], uint32(p.Flags))
		le.PutUint64(h[8:], p.Off)
		le.PutUint64(h[16:], p.Vaddr)
		le.PutUint64(h[24:], p.Vaddr)
		le.PutUint64(h[32:], p.Filesz)
		le.PutUint64(h[40:], p.Memsz)
		le.PutUint64(h[48:], 0x1000)
	}
}

// Write writes the image to path (mode 0755), sparse past its bytes.
func (im *Image) Write(path string) error {
	b, size := im.Bytes()
	if err := os.WriteFile(path, b, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if size > int64(len(b)) {
		if err := os.Truncate(path, size); err != nil {
			return fmt.Errorf("extend %s: %w", path, err)
		}
	}
	return nil
}

// loadAll is a PT_LOAD of the whole file at address 0, read and execute.
var loadAll = Prog{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X}

// stubSections are .text over the stub and, when name is not empty, a
// .symtab naming it (its .strtab after it): the first sections of an
// image, so .text is Index(0).
func stubSections(name string) []Section {
	text := Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR,
		Addr: StubOff, Off: StubOff, Size: uint64(len(Stub)), Align: 16}
	if name == "" {
		return []Section{text}
	}
	return []Section{text, symtab(Index(2), Index(0), name, StubOff), {Name: ".strtab", Type: elf.SHT_STRTAB, Data: []byte("\x00" + name + "\x00")}}
}

// symtab is a .symtab of one global function name at addr in section
// shndx, its strings in section strtab ("\x00name\x00").
func symtab(strtab, shndx uint32, name string, addr uint64) Section {
	sym := make([]byte, 48)
	le.PutUint32(sym[24:], 1)
	sym[24+4] = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
	le.PutUint16(sym[24+6:], uint16(shndx))
	le.PutUint64(sym[24+8:], addr)
	le.PutUint64(sym[24+16:], uint64(len(Stub)))
	return Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Data: sym, Link: strtab, Info: 1, Align: 8, Entz: 24}
}
