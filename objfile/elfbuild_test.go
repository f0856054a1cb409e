package objfile

import (
	"debug/elf"
	"encoding/binary"
)

// A small ELF writer for tests of the symbol table reader: the sections
// given, in order after the null section, then .shstrtab and the section
// headers. Nothing else (no program headers).

type testSection struct {
	name  string
	typ   elf.SectionType
	flags elf.SectionFlag
	link  uint32
	data  []byte
	size  uint64 // sh_size when not 0 (a lie about data)
	addr  uint64 // sh_addr
	off   uint64 // sh_offset when not 0 (a lie about where data is)
}

type testSym struct {
	name        uint32
	info        byte
	shndx       uint16
	value, size uint64
}

func funcSym(name uint32, shndx uint16, value uint64) testSym {
	return testSym{name: name, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: shndx, value: value, size: 16}
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

type testELF struct {
	class    elf.Class
	order    byteOrder
	sections []testSection
}

func newTestELF() *testELF { return &testELF{class: elf.ELFCLASS64, order: binary.LittleEndian} }

func (e *testELF) wide() bool { return e.class == elf.ELFCLASS64 }

// word appends a 4- or 8-byte field (Elf32_Addr/Off vs Elf64_Addr/Off).
func (e *testELF) word(b []byte, v uint64) []byte {
	if e.wide() {
		return e.order.AppendUint64(b, v)
	}
	return e.order.AppendUint32(b, uint32(v))
}

// syms encodes symbol records, the null record first.
func (e *testELF) syms(ss ...testSym) []byte {
	var b []byte
	for _, s := range append([]testSym{{}}, ss...) {
		b = e.order.AppendUint32(b, s.name)
		if e.wide() {
			b = append(b, s.info, 0)
			b = e.order.AppendUint16(b, s.shndx)
			b = e.order.AppendUint64(b, s.value)
			b = e.order.AppendUint64(b, s.size)
			continue
		}
		b = e.order.AppendUint32(b, uint32(s.value))
		b = e.order.AppendUint32(b, uint32(s.size))
		b = append(b, s.info, 0)
		b = e.order.AppendUint16(b, s.shndx)
	}
	return b
}

// dyn encodes dynamic entries, DT_NULL last.
func (e *testELF) dyn(kv ...uint64) []byte {
	var b []byte
	for _, v := range append(kv, 0, 0) {
		b = e.word(b, v)
	}
	return b
}

func (e *testELF) add(s testSection) uint16 {
	e.sections = append(e.sections, s)
	return uint16(len(e.sections))
}

// bytes lays the file out.
func (e *testELF) bytes() []byte {
	ehsize, shentsize := 52, 40
	if e.wide() {
		ehsize, shentsize = 64, 64
	}
	shstr := []byte{0}
	names := make([]uint32, len(e.sections)+1)
	for i, s := range e.sections {
		names[i] = uint32(len(shstr))
		shstr = append(append(shstr, s.name...), 0)
	}
	names[len(e.sections)] = uint32(len(shstr))
	shstr = append(shstr, ".shstrtab\x00"...)
	all := append(e.sections, testSection{typ: elf.SHT_STRTAB, data: shstr})
	body := make([]byte, ehsize)
	offs := make([]uint64, len(all))
	for i, s := range all {
		offs[i] = uint64(len(body))
		body = append(body, s.data...)
	}
	shoff := uint64(len(body))
	body = append(body, make([]byte, shentsize)...) // the null section
	for i, s := range all {
		size, off := uint64(len(s.data)), offs[i]
		if s.size != 0 {
			size = s.size
		}
		if s.off != 0 {
			off = s.off
		}
		body = e.order.AppendUint32(body, names[i])
		body = e.order.AppendUint32(body, uint32(s.typ))
		body = e.word(body, uint64(s.flags))
		body = e.word(body, s.addr)
		body = e.word(body, off)
		body = e.word(body, size)
		body = e.order.AppendUint32(body, s.link)
		body = e.order.AppendUint32(body, 0) // sh_info
		body = e.word(body, 1)               // sh_addralign
		body = e.word(body, 0)               // sh_entsize
	}
	e.header(body[:0:ehsize], shoff, len(all)+1, shentsize)
	return body
}

func (e *testELF) header(h []byte, shoff uint64, shnum, shentsize int) {
	data := elf.ELFDATA2LSB
	if e.order == binary.BigEndian {
		data = elf.ELFDATA2MSB
	}
	h = append(h, 0x7f, 'E', 'L', 'F', byte(e.class), byte(data), 1)
	h = append(h, make([]byte, 9)...)
	h = e.order.AppendUint16(h, uint16(elf.ET_DYN))
	h = e.order.AppendUint16(h, uint16(elf.EM_X86_64))
	h = e.order.AppendUint32(h, 1)
	h = e.word(h, 0) // e_entry
	h = e.word(h, 0) // e_phoff
	h = e.word(h, shoff)
	h = e.order.AppendUint32(h, 0) // e_flags
	h = e.order.AppendUint16(h, uint16(cap(h)))
	h = e.order.AppendUint16(h, 0) // e_phentsize
	h = e.order.AppendUint16(h, 0) // e_phnum
	h = e.order.AppendUint16(h, uint16(shentsize))
	h = e.order.AppendUint16(h, uint16(shnum))
	e.order.AppendUint16(h, uint16(shnum-1)) // .shstrtab is last
}

// sampleELF is a shared library with .text, .dynsym/.dynstr (two
// functions, one object, one undefined), .dynamic (SONAME, NEEDED,
// RUNPATH) and .symtab/.strtab (a local function, an alias, an IFUNC, an
// absolute symbol and one at address 0).
func sampleELF(e *testELF) *testELF {
	text := e.add(testSection{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, data: make([]byte, 64)})
	dynstr := e.add(testSection{name: ".dynstr", typ: elf.SHT_STRTAB,
		data: []byte("\x00foo\x00bar\x00obj\x00libx.so.1\x00libc.so.6\x00/opt/lib:$ORIGIN\x00")})
	e.add(testSection{name: ".dynsym", typ: elf.SHT_DYNSYM, flags: elf.SHF_ALLOC, link: uint32(dynstr), data: e.syms(
		funcSym(1, text, 0x1000), funcSym(5, text, 0x1010),
		testSym{name: 9, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_OBJECT), shndx: text, value: 0x1020},
		funcSym(1, uint16(elf.SHN_UNDEF), 0))})
	e.add(testSection{name: ".dynamic", typ: elf.SHT_DYNAMIC, link: uint32(dynstr), data: e.dyn(
		uint64(elf.DT_SONAME), 13, uint64(elf.DT_NEEDED), 23, uint64(elf.DT_RUNPATH), 33)})
	strtab := e.add(testSection{name: ".strtab", typ: elf.SHT_STRTAB, data: []byte("\x00local_fn\x00foo_alias\x00my_ifunc\x00abs\x00")})
	e.add(testSection{name: ".symtab", typ: elf.SHT_SYMTAB, link: uint32(strtab), data: e.syms(
		testSym{name: 1, info: elf.ST_INFO(elf.STB_LOCAL, elf.STT_FUNC), shndx: text, value: 0x1030, size: 8},
		testSym{name: 10, info: elf.ST_INFO(elf.STB_WEAK, elf.STT_FUNC), shndx: text, value: 0x1000, size: 16},
		testSym{name: 20, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_GNU_IFUNC), shndx: text, value: 0x1038},
		testSym{name: 29, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: uint16(elf.SHN_ABS), value: 0x2000},
		funcSym(29, text, 0))})
	return e
}
