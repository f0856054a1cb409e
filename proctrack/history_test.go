package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/objfile"
)

// fixture returns the path of a fixture binary, skipping when missing.
func fixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "tests", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

// installFixture copies fixture binary name to dst, creating its directory.
func installFixture(t *testing.T, name, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// fileMapping is an executable mapping of the whole file at path (file
// offset 0) from start, named name as /proc/PID/maps would show it.
func fileMapping(t *testing.T, path, name string, start uint64) Mapping {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return Mapping{Start: start, End: start + uint64(fi.Size()), Perms: "r-xp",
		Dev: procmaps.StatDev(st.Dev), Inode: st.Ino, Path: name}
}

// mapsLine is m as a line of /proc/PID/maps (file offset 0).
func mapsLine(m Mapping) string {
	return fmt.Sprintf("%x-%x r-xp 00000000 %s %d %s\n", m.Start, m.End, m.Dev, m.Inode, m.Path)
}

// funcFileOffset is the file offset of function fn in the ELF file at path.
func funcFileOffset(t *testing.T, path, fn string) uint64 {
	t.Helper()
	o, err := objfile.LoadObject(path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range o.Funcs {
		if f.Name == fn {
			if off, ok := o.FileOffset(f.Addr); ok {
				return off
			}
		}
	}
	t.Fatalf("no %s in %s", fn, path)
	return 0
}

// functionAt is the function that names addr of the image that ran a
// stack of pid counted under comm (ImageOf), as the symbolizer names it
// from the image's object: "" when none does.
func functionAt(h *History, pid int, comm string, addr uint64) string {
	g := h.ImageOf(pid, comm, []uint64{addr})
	if g == nil {
		return ""
	}
	m, o, ok := g.At(addr)
	if !ok || o == nil {
		return ""
	}
	va, ok := o.VirtAddr(addr - m.Start + m.Offset)
	if !ok {
		return ""
	}
	_, name := o.SymbolAt(va)
	return name
}

// newTestHistory is a History over root without separate debug files.
func newTestHistory(root string) *History {
	return NewHistory(HistoryConfig{Root: root, Objects: objfile.NewIndex("")})
}
