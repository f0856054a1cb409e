package unwind

import (
	"debug/elf"
	"path/filepath"
	"testing"
)

// FDEAt finds, through .eh_frame_hdr, the FDE ParseCFI gives for every
// pc of .eh_frame: at its first and last byte; and none below the first.
func TestFDEAtAgreesWithParseCFI(t *testing.T) {
	paths := []string{filepath.Join(fixtureDir, "cxx"), filepath.Join(fixtureDir, "spin-stripped"),
		filepath.Join(fixtureDir, "libfx.so"), systemLib("libc.so.6")}
	n := 0
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		n += checkFDEAt(t, p, f)
		f.Close()
	}
	if n < 100 {
		t.Errorf("only %d FDEs checked", n)
	}
}

// checkFDEAt checks the FDEs of f (at path) and returns how many.
func checkFDEAt(t *testing.T, path string, f *elf.File) int {
	t.Helper()
	data, addr, err := frameSection(f, EhFrame, readSection)
	if err != nil || data == nil {
		t.Fatalf("%s: no .eh_frame: %v", path, err)
	}
	fr, err := ParseCFI(EhFrame, data, bases(f, addr))
	if err != nil {
		t.Fatal(err)
	}
	lowest := ^uint64(0)
	for _, d := range fr.FDEs {
		lowest = min(lowest, d.Start)
		if d.End == d.Start {
			continue
		}
		for _, pc := range []uint64{d.Start, d.End - 1} {
			if s, e, ok := FDEAt(f, pc); !ok || s != d.Start || e != d.End {
				t.Errorf("%s: FDEAt(%#x) = [%#x, %#x) %v, want [%#x, %#x)", path, pc, s, e, ok, d.Start, d.End)
				return 0
			}
		}
	}
	if _, _, ok := FDEAt(f, lowest-1); ok {
		t.Errorf("%s: an FDE below the first", path)
	}
	return len(fr.FDEs)
}

// A file without .eh_frame_hdr, or with a table FDEAt does not search,
// gives no FDE, and never a panic.
func TestFDEAtMissingTable(t *testing.T) {
	f, err := elf.Open(filepath.Join(fixtureDir, "cxx"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if _, _, ok := FDEAt(f, 0); ok {
		t.Error("FDEAt(0) found an FDE")
	}
	hdr := f.Section(".eh_frame_hdr")
	if hdr == nil {
		t.Fatal("no .eh_frame_hdr")
	}
	hdr.Name, hdr.Type = ".eh_frame_hdr_gone", elf.SHT_NOBITS
	if _, _, ok := FDEAt(f, f.Entry); ok {
		t.Error("an FDE without .eh_frame_hdr")
	}
}
