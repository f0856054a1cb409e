package bpf

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

const fixtures = "../tests/fixtures/bin"

// fileOffset returns the file offset of symbol sym in path (test helper; the
// product gets offsets from resolver).
func fileOffset(t *testing.T, path, sym string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name != sym || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && s.Value >= p.Vaddr && s.Value < p.Vaddr+p.Memsz {
				return s.Value - p.Vaddr + p.Off
			}
		}
	}
	t.Fatalf("no function %s in %s", sym, path)
	return 0
}

func openSession(t *testing.T, opts Options) *Session {
	t.Helper()
	testgate.Root(t)
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestUprobeEntryStack(t *testing.T) {
	for _, multi := range []bool{true, false} {
		name := map[bool]string{true: "multi", false: "single"}[multi]
		t.Run(name, func(t *testing.T) {
			bin := testgate.PrivateFixture(t, filepath.Join(fixtures, "chain-fp"))
			s := openSession(t, Options{})
			off := fileOffset(t, bin, "leaf")
			st, err := s.AttachUprobes(7, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !multi)
			if err != nil || st.Attached != 1 {
				t.Fatalf("attach: %+v %v", st, err)
			}
			if err := exec.Command(bin, "1000").Run(); err != nil {
				t.Fatal(err)
			}
			snap, err := s.Drain(8)
			if err != nil {
				t.Fatal(err)
			}
			var total uint64
			for _, c := range snap.Counts {
				if c.Probe != 7 {
					t.Errorf("count for probe %d, want 7", c.Probe)
				}
				if len(c.User) < 6 { // leaf c b a main __libc_start_call_main...
					t.Errorf("user stack has %d frames, want >= 6: %x", len(c.User), c.User)
				}
				total += c.Count
			}
			if total != 1000 || snap.Hits[7] != 1000 {
				t.Errorf("counted %d, hits %d, want 1000", total, snap.Hits[7])
			}
			if len(snap.Drops) != 0 {
				t.Errorf("drops: %v", snap.Drops)
			}
		})
	}
}
