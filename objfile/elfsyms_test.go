package objfile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

// tables is what the symbol and dynamic table reader produces.
type tables struct {
	Funcs                  []Symbol
	Soname                 string
	Needed, Rpath, Runpath []string
	DynsymOK, SymtabOK     bool
}

// readTables runs the reader under test, without a panic guard.
func readTables(f *elf.File) tables {
	o := &Object{}
	t := newSectionTables(f)
	o.readDynamic(t)
	dynOK := o.addSymbols(t, elf.SHT_DYNSYM, fromDynsym)
	symOK := o.addSymbols(t, elf.SHT_SYMTAB, fromSymtab)
	return tables{o.Funcs, o.Soname, o.Needed, o.Rpath, o.Runpath, dynOK, symOK}.normal()
}

// normal makes empty lists nil, so that tables compare by content.
func (t tables) normal() tables {
	if len(t.Funcs) == 0 {
		t.Funcs = nil
	}
	for _, l := range []*[]string{&t.Needed, &t.Rpath, &t.Runpath} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return t
}

// debugELFTables is the same through debug/elf's Symbols, DynamicSymbols
// and DynString, as the resolver read them before elfsyms.go.
func debugELFTables(f *elf.File) tables {
	var out tables
	dyn, err := f.DynamicSymbols()
	out.DynsymOK = err == nil
	tab, err := f.Symbols()
	out.SymtabOK = err == nil
	for i, syms := range [][]elf.Symbol{dyn, tab} {
		for _, s := range syms {
			t := elf.ST_TYPE(s.Info)
			if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Section == elf.SHN_UNDEF || s.Name == "" || !execSection(f, s.Section) {
				continue
			}
			b := elf.ST_BIND(s.Info)
			out.Funcs = append(out.Funcs, Symbol{Name: s.Name, Addr: s.Value, Size: s.Size, from: uint8(i),
				Global: b == elf.STB_GLOBAL || b == elf.STB_WEAK})
		}
	}
	dynStr := func(tag elf.DynTag) []string { s, _ := f.DynString(tag); return s }
	if s := dynStr(elf.DT_SONAME); len(s) > 0 {
		out.Soname = s[0]
	}
	out.Needed = dynStr(elf.DT_NEEDED)
	for _, s := range dynStr(elf.DT_RPATH) {
		out.Rpath = append(out.Rpath, strings.Split(s, ":")...)
	}
	for _, s := range dynStr(elf.DT_RUNPATH) {
		out.Runpath = append(out.Runpath, strings.Split(s, ":")...)
	}
	return out.normal()
}

func TestSymbolTablesSample(t *testing.T) {
	for _, v := range []struct {
		name  string
		class elf.Class
		order byteOrder
	}{{"64-bit LE", elf.ELFCLASS64, binary.LittleEndian}, {"32-bit LE", elf.ELFCLASS32, binary.LittleEndian}, {"64-bit BE", elf.ELFCLASS64, binary.BigEndian}} {
		e := newTestELF()
		e.class, e.order = v.class, v.order
		f, err := elf.NewFile(bytes.NewReader(sampleELF(e).bytes()))
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		got := readTables(f)
		want := tables{
			Funcs: []Symbol{
				{Name: "foo", Addr: 0x1000, Size: 16, Global: true, from: fromDynsym},
				{Name: "bar", Addr: 0x1010, Size: 16, Global: true, from: fromDynsym},
				{Name: "local_fn", Addr: 0x1030, Size: 8, from: fromSymtab},
				{Name: "foo_alias", Addr: 0x1000, Size: 16, Global: true, from: fromSymtab},
				{Name: "my_ifunc", Addr: 0x1038, Global: true, from: fromSymtab},
			},
			Soname: "libx.so.1", Needed: []string{"libc.so.6"}, Runpath: []string{"/opt/lib", "$ORIGIN"},
			DynsymOK: true, SymtabOK: true,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", v.name, got, want)
		}
		if ref := debugELFTables(f); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: differs from debug/elf:\n got %+v\n ref %+v", v.name, got, ref)
		}
	}
}

// malformedELFs are sample files with one thing wrong each; they seed
// FuzzSymbolTables (testdata/fuzz, rewritten by go test -update).
func malformedELFs() map[string][]byte {
	mk := func(change func(e *testELF)) []byte {
		e := sampleELF(newTestELF())
		change(e)
		return e.bytes()
	}
	sec := func(e *testELF, name string) *testSection {
		for i := range e.sections {
			if e.sections[i].name == name {
				return &e.sections[i]
			}
		}
		panic(name)
	}
	out := map[string][]byte{
		"sample":            mk(func(*testELF) {}),
		"link-zero":         mk(func(e *testELF) { sec(e, ".dynsym").link = 0 }),
		"link-out-of-range": mk(func(e *testELF) { sec(e, ".symtab").link = 99 }),
		"name-past-strtab":  mk(func(e *testELF) { sec(e, ".dynstr").data = []byte("\x00foo\x00") }),
		"unterminated":      mk(func(e *testELF) { s := sec(e, ".strtab"); s.data = s.data[:len(s.data)-1] }),
		"symtab-odd-size":   mk(func(e *testELF) { s := sec(e, ".symtab"); s.data = s.data[:len(s.data)-3] }),
		"symtab-short":      mk(func(e *testELF) { sec(e, ".dynsym").data = make([]byte, 5) }),
		"symtab-empty":      mk(func(e *testELF) { sec(e, ".symtab").data = nil }),
		"strtab-past-eof":   mk(func(e *testELF) { sec(e, ".dynstr").off = 1 << 40 }),
		"strtab-huge":       mk(func(e *testELF) { sec(e, ".strtab").size = 1 << 62 }),
		"symtab-huge":       mk(func(e *testELF) { sec(e, ".dynsym").size = 1<<40 + 24 }),
		"strtab-nobits":     mk(func(e *testELF) { sec(e, ".dynstr").typ = elf.SHT_NOBITS }),
		"dynamic-odd-size":  mk(func(e *testELF) { s := sec(e, ".dynamic"); s.data = s.data[:len(s.data)-1] }),
		"dynamic-bad-value": mk(func(e *testELF) { sec(e, ".dynamic").data = e.dyn(uint64(elf.DT_NEEDED), 1<<63) }),
		"shndx-past-end":    mk(func(e *testELF) { sec(e, ".symtab").data = e.syms(funcSym(1, 0xff00, 0x1000)) }),
		"shndx-xindex":      mk(func(e *testELF) { sec(e, ".symtab").data = e.syms(funcSym(1, uint16(elf.SHN_XINDEX), 0x1000)) }),
	}
	e := newTestELF()
	e.class = elf.ELFCLASS32
	out["sample-32"] = sampleELF(e).bytes()
	e = newTestELF()
	e.order = binary.BigEndian
	out["sample-be"] = sampleELF(e).bytes()
	return out
}

// Malformed tables give what debug/elf gave (an error there is no
// symbols here), and never a panic.
func TestSymbolTablesMalformed(t *testing.T) {
	for name, b := range malformedELFs() {
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got, ref := readTables(f), debugELFTables(f); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: differs from debug/elf:\n got %+v\n ref %+v", name, got, ref)
		}
	}
}

// TestFuzzSeeds keeps the committed seed corpus of FuzzSymbolTables in
// step with malformedELFs (go test -update rewrites it).
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzSymbolTables")
	for name, b := range malformedELFs() {
		p := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s is missing or stale (go test -update to rewrite): %v", p, err)
		}
	}
}

// The reader agrees with debug/elf on real files: the fixtures, this test
// binary, and the system's libc, libstdc++ and (without -short) libLLVM.
func TestSymbolTablesRealFiles(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(filepath.Dir(fixture(t, "cxx")), "*"))
	paths = append(paths, "/proc/self/exe")
	paths = append(paths, systemLibs("libc.so.6", "libstdc++.so.6*")...)
	if !testing.Short() {
		paths = append(paths, llvmLib)
	}
	n := 0
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		n++
		if got, ref := readTables(f), debugELFTables(f); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: %d functions, soname %q, needed %q; debug/elf: %d, %q, %q", p,
				len(got.Funcs), got.Soname, got.Needed, len(ref.Funcs), ref.Soname, ref.Needed)
		}
		f.Close()
	}
	if n < 5 {
		t.Errorf("only %d ELF files checked", n)
	}
}

// FuzzSymbolTables: on any input debug/elf accepts, the reader must not
// panic and must find what debug/elf's Symbols, DynamicSymbols and
// DynString find.
// The seeds are the small files of malformedELFs (testdata/fuzz): the
// fuzzer minimizes every new input, which takes minutes on a real binary.
func FuzzSymbolTables(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		var ef *elf.File
		var ref tables
		if safeelf.Guard("fuzz", func() (err error) {
			if ef, err = elf.NewFile(bytes.NewReader(b)); err == nil {
				ref = debugELFTables(ef)
			}
			return err
		}) != nil {
			return // debug/elf refused or panicked: the reader is not reached
		}
		if got := readTables(ef); !reflect.DeepEqual(got, ref) {
			t.Errorf("differs from debug/elf:\n got %+v\n ref %+v", got, ref)
		}
	})
}
