package resolver

import (
	"debug/elf"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

func TestEntryAndGoBinary(t *testing.T) {
	for _, c := range []struct {
		name  string
		goBin bool
	}{{"chain-fp", false}, {"chain-nopie-nofp", false}, {"gofx", true}} {
		path := testgate.Fixture(t, "../tests/fixtures/bin/"+c.name)
		off, err := EntryFileOffset(path)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := elf.Open(path)
		if got, ok := fileOffsetOf(f, f.Entry); !ok || got != off {
			t.Errorf("%s: entry offset %#x, want %#x", c.name, off, got)
		}
		f.Close()
		if IsGoBinary(path) != c.goBin {
			t.Errorf("%s: IsGoBinary = %v", c.name, !c.goBin)
		}
	}
	if _, err := EntryFileOffset("testdata/does-not-exist"); err == nil {
		t.Error("missing file: want an error")
	}
}

func fileOffsetOf(f *elf.File, va uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && va >= p.Vaddr && va < p.Vaddr+p.Filesz {
			return va - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// ld.so exports its debugger interface; a program does not.
func TestFindLdsoDebug(t *testing.T) {
	d, err := FindLdsoDebug("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skipf("no glibc ld.so here: %v", err)
	}
	if d.StateAddr == 0 || d.RDebugAddr == 0 || d.StateOffset == 0 {
		t.Errorf("ld.so debug interface = %+v, want all set", d)
	}
	if _, err := FindLdsoDebug(fixture(t, "chain-fp")); err == nil {
		t.Error("chain-fp: no error, want no _dl_debug_state")
	}
}
