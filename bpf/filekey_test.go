package bpf

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
)

// A program on an overlayfs (a container image) is unwound by its file's
// table: the key under which probee loads the table is the one the
// unwinder looks up, the layer's file the mapping holds (its device and
// inode), not the overlay's inode that stat (and /proc/PID/maps on 6.9+)
// shows. chain-nofp runs from an overlay whose lower layer holds it, with
// no per-process mapping array: every stack is complete, none partial.
func TestFileKeyOverlay(t *testing.T) {
	gateFindVMA(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-nofp")))
	libc, err := filepath.EvalSymlinks("/lib/x86_64-linux-gnu/libc.so.6")
	if err != nil {
		t.Skipf("no libc to unwind through: %v", err)
	}
	dir := t.TempDir()
	lower, merged := filepath.Join(dir, "lower"), filepath.Join(dir, "merged")
	for _, d := range []string{lower, merged, dir + "/upper", dir + "/work"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, bin, filepath.Join(lower, "app"))
	merged = overlayMount(t, "lowerdir="+lower+",upperdir="+dir+"/upper,workdir="+dir+"/work", merged)

	s := openSession(t, Options{DWARF: true})
	cache := unwind.NewCache()
	app := execModule(t, cache, filepath.Join(merged, "app"), 0x555555554000)
	lib := execModule(t, cache, libc, 0x7ffff7d80000)
	s.tmu.Lock()
	key, _ := s.fileKey(app)
	s.tmu.Unlock()
	real := statOf(t, filepath.Join(lower, "app"))
	if want := (probeeFileKey{Dev: uint64(unix.Major(real.Dev))<<20 | uint64(unix.Minor(real.Dev)), Ino: real.Ino}); key != want {
		t.Errorf("key of the overlay's app = %+v, want the lower file's %+v (stat of the overlay: %s %d)", key, want, app.Dev, app.Inode)
	}
	if err := s.SetFileModules([]unwind.Module{app, lib}); err != nil {
		t.Fatal(err)
	}
	target := UprobeTarget{Path: app.File, Offset: fileOffset(t, app.File, "leaf"), Entry: true, Name: "leaf"}
	if st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{target}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	if out, err := exec.Command(app.File, "300").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", app.File, err, out)
	}
	checkChainStacks(t, s, 300)
}

// overlayMount mounts an overlayfs at dir in a mount namespace of its own,
// held by a sleeping process for the rest of the test, and returns the
// path that reaches dir there: /proc/PID/root/DIR, as probee reaches a
// container's files (the host's mounts are left alone; the namespace
// goes with the process). Every thread of the test reaches it (a
// namespace of the test's own thread would hide it from the goroutines
// that read files within their time budget: internal/fileid.Bounded).
func overlayMount(t *testing.T, opts, dir string) string {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount -t overlay overlay -o "$0" "$1" && touch "$2" && exec sleep 600`, opts, dir, ready)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			testgate.Feature(t, "overlayfs", true, fmt.Errorf("mount: %s", out))
		}
	}
	return fmt.Sprintf("/proc/%d/root%s", cmd.Process.Pid, dir)
}

// execModule is the module of path's executable segment loaded at bias,
// as unwind.Cache.Modules makes it from a process's maps (identity from
// stat).
func execModule(t *testing.T, cache *unwind.Cache, path string, bias uint64) unwind.Module {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st := statOf(t, path)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
			continue
		}
		off := p.Off &^ 0xfff
		m := procmaps.Mapping{Start: bias + p.Vaddr&^0xfff, Perms: "r-xp", Offset: off,
			Dev: procmaps.StatDev(st.Dev), Inode: st.Ino, Path: path}
		m.End = (m.Start + p.Off - off + p.Filesz + 0xfff) &^ 0xfff
		mods, errs := cache.Modules([]procmaps.Mapping{m}, nil)
		if len(mods) != 1 {
			t.Fatalf("module of %s: %v", path, errs)
		}
		return mods[0]
	}
	t.Fatalf("%s has no executable segment", path)
	return unwind.Module{}
}

func statOf(t *testing.T, path string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
