// Package maptest holds what the tests of the packages that read
// processes' mappings share (proctrack, resolver, symbolize): files put
// where a test process "maps" them, the mapping /proc/PID/maps would show
// for them, function offsets in them, the fixture binaries and a process
// running one. Test helpers only.
package maptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
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

// Fixture is the path of fixture binary name (tests/fixtures/bin); the
// test skips when it is missing (run make fixtures).
func Fixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "tests", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

// StartSpin runs fixture spin-nofp for 10 s (killed at the test's end)
// once the dynamic loader has mapped libc into it (or after 1 s), and
// returns it with its binary's path.
func StartSpin(t testing.TB) (*exec.Cmd, string) {
	t.Helper()
	bin := Fixture(t, "spin-nofp")
	cmd := exec.Command(bin, "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	maps := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "maps")
	for range 100 {
		if b, _ := os.ReadFile(maps); strings.Contains(string(b), "libc.so.6") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, bin
}

// ContainerRoot makes a fake root where /usr/lib/libctr.so is spin-nofp on
// the host and chain-nofp in the container of pid 7, which has its own
// mount namespace: /proc/7/root links to the container's root, and
// /proc/7/maps shows the container's path. It returns the root and pid
// 7's mapping of its libctr.so (at 0x10000), whose file is at ctrLib.
func ContainerRoot(t testing.TB) (root string, lib procmaps.Mapping, ctrLib string) {
	t.Helper()
	root = t.TempDir()
	Install(t, Fixture(t, "spin-nofp"), filepath.Join(root, "usr/lib/libctr.so"))
	ctr := filepath.Join(root, "ctr")
	ctrLib = filepath.Join(ctr, "usr/lib/libctr.so")
	Install(t, Fixture(t, "chain-nofp"), ctrLib)
	if err := os.MkdirAll(filepath.Join(root, "proc/7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ctr, filepath.Join(root, "proc/7/root")); err != nil {
		t.Fatal(err)
	}
	lib = FileMapping(t, ctrLib, "/usr/lib/libctr.so", 0x10000)
	if err := os.WriteFile(filepath.Join(root, "proc/7/maps"), []byte(MapsLine(lib)), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, lib, ctrLib
}
