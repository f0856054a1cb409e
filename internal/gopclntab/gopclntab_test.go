package gopclntab

import (
	"bytes"
	"debug/elf"
	"os"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// Every function of the table lies where the binary's own .symtab puts
// it (the oracle), under .symtab's name, for a binary
// Go linked and for binaries the system linker linked, executable and
// PIE, where .text starts with C start-up code 0x100 bytes before
// runtime.text. The stripped copy of gofx-cgo gives the same table.
func TestFuncsMatchSymtab(t *testing.T) {
	for _, c := range []struct{ name, table string }{
		{"gofx", "gofx"}, {"gofx-cgo", "gofx-cgo"}, {"gofx-cgo-pie", "gofx-cgo-pie"},
		{"gofx-cgo", "gofx-cgo-stripped"},
	} {
		t.Run(c.table, func(t *testing.T) {
			syms := symtab(t, open(t, c.name))
			funcs, err := Funcs(open(t, c.table))
			if err != nil {
				t.Fatal(err)
			}
			var same, checked int
			var wrong []string
			for _, fn := range funcs {
				// Of a function and its ABI wrapper, .symtab names
				// the ABI0 one "name.abi0", and so does the table
				// (abi.go); an assembly function without a wrapper
				// is "name.abi0" there only.
				addr, ok := syms[fn.Name]
				abi0, ok0 := syms[fn.Name+".abi0"]
				if !ok && !ok0 {
					continue
				}
				checked++
				if (ok && addr == fn.Entry) || (!ok && abi0 == fn.Entry) {
					same++
				} else if len(wrong) < 5 {
					wrong = append(wrong, fn.Name)
				}
			}
			t.Logf("%d functions, %d with a symbol, %d at its address", len(funcs), checked, same)
			if checked < 1000 || same != checked {
				t.Errorf("%d of %d functions at their symbol's address, want all of >= 1000; wrong: %v", same, checked, wrong)
			}
		})
	}
}

// open returns the fixture's ELF file, closed at the test's end.
func open(t *testing.T, name string) *elf.File {
	f, err := elf.Open(testgate.Fixture(t, "../../tests/fixtures/bin/"+name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// symtab returns the addresses of f's function symbols by name.
func symtab(t *testing.T, f *elf.File) map[string]uint64 {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			out[s.Name] = s.Value
		}
	}
	return out
}

// A file without the table has ErrNoTable.
func TestFuncsNoTable(t *testing.T) {
	if _, err := Funcs(open(t, "chain-fp")); err != ErrNoTable {
		t.Errorf("chain-fp: %v, want ErrNoTable", err)
	}
}

// A table overwritten from its start by arbitrary bytes (the rest kept)
// gives an error or a list, never a panic; so does module data that points
// at the table with garbage after it.
func FuzzFuncs(f *testing.F) {
	raw, _, off, size := tableOf(f, "gofx-cgo-stripped")
	f.Add(raw[off : off+64])
	f.Add([]byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8})
	f.Add([]byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		mod := bytes.Clone(raw)
		copy(mod[off:off+min(uint64(len(b)), size)], b)
		file, err := elf.NewFile(bytes.NewReader(mod))
		if err != nil {
			t.Fatal(err)
		}
		Funcs(file)
	})
}

// tableOf returns the bytes of fixture name, the ELF file they hold and
// where its .gopclntab is.
func tableOf(tb testing.TB, name string) (raw []byte, file *elf.File, off, size uint64) {
	raw, file = fixtureELF(tb, name)
	s := file.Section(".gopclntab")
	if s == nil {
		tb.Fatalf("%s has no .gopclntab", name)
	}
	return raw, file, s.Offset, s.Size
}

// fixtureELF returns the bytes of fixture name and the ELF file they hold.
func fixtureELF(tb testing.TB, name string) ([]byte, *elf.File) {
	raw, err := os.ReadFile(testgate.Fixture(tb, "../../tests/fixtures/bin/"+name))
	if err != nil {
		tb.Fatal(err)
	}
	file, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	return raw, file
}

// A table overwritten at its function table or at an inline tree (the
// rest kept) gives frames or none, never a panic: the unguarded lookup is
// driven so that a bug is not hidden by Frames' recover.
func FuzzFrames(f *testing.F) {
	raw, file, off, size := tableOf(f, "gofx-stripped")
	tab, err := Open(file)
	if err != nil {
		f.Fatal(err)
	}
	fns := tab.Funcs()
	f.Add(uint32(0), []byte{0xff, 0xff, 0xff, 0x7f}, uint16(3))
	f.Add(uint32(size/2), []byte{0x80, 0x80, 0x80, 0x80, 0x80}, uint16(500))
	f.Fuzz(func(t *testing.T, at uint32, b []byte, fn uint16) {
		mod := bytes.Clone(raw)
		pos := off + uint64(at)%size
		copy(mod[pos:off+size], b)
		file, err := elf.NewFile(bytes.NewReader(mod))
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Open(file)
		if err != nil {
			return
		}
		target := fns[int(fn)%len(fns)]
		for pc := target.Entry; pc < target.End; pc += 3 {
			tab.frames(pc)
		}
	})
}
