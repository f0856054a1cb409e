// Package maptest holds what the tests of the packages that read
// processes' mappings share (proctrack, resolver, symbolize): files put
// where a test process "maps" them, the mapping /proc/PID/maps would show
// for them, and function offsets in them. Test helpers only.
package maptest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// Install copies the file at src to dst (mode 0755), creating dst's
// directory.
func Install(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// SameFile reports whether a and b name the same file.
func SameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// FileMapping is an executable mapping of the whole file at path (file
// offset 0) from start, named name as /proc/PID/maps would show it.
func FileMapping(t testing.TB, path, name string, start uint64) procmaps.Mapping {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return procmaps.Mapping{Start: start, End: start + uint64(fi.Size()), Perms: "r-xp",
		Dev: procmaps.StatDev(st.Dev), Inode: st.Ino, Path: name}
}

// MapsLine is m as a line of /proc/PID/maps (file offset 0).
func MapsLine(m procmaps.Mapping) string {
	return fmt.Sprintf("%x-%x r-xp 00000000 %s %d %s\n", m.Start, m.End, m.Dev, m.Inode, m.Path)
}

// FuncFileOffset is the file offset of function fn in the ELF file at
// path.
func FuncFileOffset(t testing.TB, path, fn string) uint64 {
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
