package objfile

import (
	"bytes"
	"debug/elf"
	"testing"
)

// labelELF has .text at 0x1000-0x1100 with functions f (0x1000-0x1020) and
// g (0x1060-0x1070) and, without a type or size: _start (0x1040),
// _dl_start_user (0x1048), .Llocal (0x1070, an assembler label), tail
// (0x1080, the last), f_label (0x1000, at f), data_label (in .data) and
// sized (0x1090, with a size).
func labelELF() []byte {
	e := newTestELF()
	text := e.add(testSection{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, addr: 0x1000, data: make([]byte, 0x100)})
	data := e.add(testSection{name: ".data", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, addr: 0x2000, data: make([]byte, 0x10)})
	strtab := e.add(testSection{name: ".strtab", typ: elf.SHT_STRTAB,
		data: []byte("\x00f\x00g\x00_start\x00_dl_start_user\x00.Llocal\x00tail\x00f_label\x00data_label\x00sized\x00")})
	label := func(name uint32, shndx uint16, value, size uint64) testSym {
		return testSym{name: name, info: elf.ST_INFO(elf.STB_LOCAL, elf.STT_NOTYPE), shndx: shndx, value: value, size: size}
	}
	e.add(testSection{name: ".symtab", typ: elf.SHT_SYMTAB, link: uint32(strtab), data: e.syms(
		testSym{name: 1, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: text, value: 0x1000, size: 0x20},
		testSym{name: 3, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: text, value: 0x1060, size: 0x10},
		label(5, text, 0x1040, 0), label(12, text, 0x1048, 0), label(27, text, 0x1070, 0),
		label(35, text, 0x1080, 0), label(40, text, 0x1000, 0), label(48, data, 0x2000, 0),
		label(59, text, 0x1090, 8))})
	return e.bytes()
}

// Code labels name the pcs no function covers, up to the next function
// or label or the end of their section.
func TestLabels(t *testing.T) {
	o, err := NewObject("labels", bytes.NewReader(labelELF()))
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, o, []nameCase{
		{0x1010, "f", 0x10},              // a function covers it (f_label at f is not used)
		{0x1030, "", 0},                  // after f, before any label
		{0x1047, "_start", 7},            // ld.so's entry calling _dl_start
		{0x1050, "_dl_start_user", 8},    // the next label ends _start
		{0x105f, "_dl_start_user", 0x17}, // up to g
		{0x1065, "g", 5},
		{0x1075, "", 0},        // .Llocal is no label, and g ended _dl_start_user
		{0x1090, "tail", 0x10}, // sized has a size: no label
		{0x10ff, "tail", 0x7f}, // to the section's end
		{0x1100, "", 0},
	})
	for _, s := range o.Funcs {
		if s.Name != "f" && s.Name != "g" {
			t.Errorf("label %s among the functions (probe targets)", s.Name)
		}
	}
}

// A label at the address of a function symbol of size 0 (rust-lld's
// _start, which lld links so, where the entry label is) names the code
// after it: that symbol covers no code.
func TestLabelAtEmptyFunction(t *testing.T) {
	e := newTestELF()
	text := e.add(testSection{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, addr: 0x1000, data: make([]byte, 0x100)})
	strtab := e.add(testSection{name: ".strtab", typ: elf.SHT_STRTAB, data: []byte("\x00_start\x00main\x00")})
	e.add(testSection{name: ".symtab", typ: elf.SHT_SYMTAB, link: uint32(strtab), data: e.syms(
		testSym{name: 1, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: text, value: 0x1000, size: 0},
		testSym{name: 1, info: elf.ST_INFO(elf.STB_LOCAL, elf.STT_NOTYPE), shndx: text, value: 0x1000, size: 0},
		testSym{name: 8, info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC), shndx: text, value: 0x1040, size: 0x10})})
	o, err := NewObject("empty", bytes.NewReader(e.bytes()))
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, o, []nameCase{{0x1000, "_start", 0}, {0x1028, "_start", 0x28}, {0x1044, "main", 4}})
}

// nameCase is an address and the name and offset it symbolizes to ("":
// none).
type nameCase struct {
	va   uint64
	want string
	off  uint64
}

func checkNames(t *testing.T, o *Object, cases []nameCase) {
	t.Helper()
	for _, c := range cases {
		name, off := nameAt(o, c.va)
		if name != c.want || (c.want != "" && off != c.off) {
			t.Errorf("0x%x: %q+0x%x, want %q+0x%x", c.va, name, off, c.want, c.off)
		}
	}
}

// A stripped program's entry point is named _start over the FDE that
// covers it (glibc's _start: 38 bytes), the bytes past it are not; a
// program with a _start symbol keeps its symbol, and a library's entry
// point is no _start.
func TestEntryLabel(t *testing.T) {
	for _, c := range []struct {
		fixture string
		want    string // the name at the entry point
		symbol  bool   // _start is a function symbol there
	}{
		{"spin-stripped", "_start", false},
		{"chain-nofp", "_start", true},
		{"libfx.so", "", false},
	} {
		o, err := LoadObject(fixture(t, c.fixture), "")
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.Open(fixture(t, c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		entry := f.Entry
		f.Close()
		if at, _ := nameAt(o, entry+0x20); at != c.want {
			t.Errorf("%s: entry+0x20 is %q, want %q", c.fixture, at, c.want)
		}
		if i := o.FuncAt(entry); (i >= 0) != c.symbol {
			t.Errorf("%s: a function symbol at the entry: %v, want %v", c.fixture, i >= 0, c.symbol)
		}
		if past, _ := nameAt(o, entry+0x26); c.fixture == "spin-stripped" && past != "" {
			t.Errorf("%s: entry+0x26, past _start's FDE, is %q, want no name", c.fixture, past)
		}
	}
}
