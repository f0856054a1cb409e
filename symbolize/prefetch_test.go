package symbolize

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/output"
)

// Prefetch gives the frames AppendFrameRefs gives alone (names, source
// lines), and leaves no DWARF read: AppendFrameRefs then takes the frames
// from the memo without reading it again.
func TestPrefetch(t *testing.T) {
	root := t.TempDir()
	installFixture(t, "spin-nofp", filepath.Join(root, "usr/bin/sh"))
	const base = 0x10000
	sh := maptest.FileMapping(t, filepath.Join(root, "usr/bin/sh"), "/usr/bin/sh", base)
	spinAt := base + maptest.FuncFileOffset(t, filepath.Join(root, "usr/bin/sh"), "spin_leaf")
	writeProcess(t, root, 70, "sh", sh)
	addrs := []uint64{spinAt, spinAt + 4, base + 0x10}
	alone := New(Config{Root: root})
	want := frameValues(alone.AppendFrameRefs(nil, 70, "sh", addrs))
	if want[0].Line == 0 {
		t.Fatalf("no source line for spin_leaf: %+v", want[0])
	}
	s := New(Config{Root: root})
	s.Prefetch(slices.Values([]Stack{{PID: 70, Comm: "sh", PCs: addrs}}))
	_, o, _ := s.History().ImageOf(70, "sh", addrs).At(spinAt)
	if o == nil {
		t.Fatal("no object for sh")
	}
	if o.HoldsDWARF() {
		t.Error("Prefetch kept sh's DWARF")
	}
	got := frameValues(s.AppendFrameRefs(nil, 70, "sh", addrs))
	if o.HoldsDWARF() {
		t.Error("AppendFrameRefs read sh's DWARF again after Prefetch")
	}
	if !slices.Equal(got, want) {
		t.Errorf("after Prefetch:\n%+v\nwant\n%+v", got, want)
	}
}

func frameValues(refs []*output.Frame) []output.Frame {
	out := make([]output.Frame, len(refs))
	for i, r := range refs {
		out[i] = *r
	}
	return out
}

// writeProcess writes /proc/PID under root with comm and the mapping m,
// its root being root itself.
func writeProcess(t *testing.T, root string, pid int, comm string, m procmaps.Mapping) {
	t.Helper()
	dir := filepath.Join(root, "proc", strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"maps": maptest.MapsLine(m), "comm": comm + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
