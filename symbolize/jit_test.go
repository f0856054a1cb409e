package symbolize

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/procmaps"
)

// fakeJIT is a process in a fake /proc under root: pid 7, pid 3 in its
// namespace, with one anonymous executable mapping at 0x7f0000000000,
// started 200 s after a boot 200 s ago (now).
type fakeJIT struct {
	t    *testing.T
	root string
	sym  *Symbolizer
}

const fakeJITBase = 0x7f0000000000

func newFakeJIT(t *testing.T) *fakeJIT {
	j := &fakeJIT{t: t, root: t.TempDir()}
	j.write("/proc/7/maps", "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n")
	j.write("/proc/7/status", "Name:\tnode\nPid:\t7\nNSpid:\t7\t3\n")
	j.write("/proc/stat", "cpu  1 2 3\nbtime "+strconv.FormatInt(time.Now().Unix()-200, 10)+"\nprocesses 9\n")
	j.mkdir("/proc/7/root/tmp")
	j.started(20000)
	j.sym = New(Config{Root: j.root, DebugDir: "-"})
	return j
}

func (j *fakeJIT) path(p string) string { return filepath.Join(j.root, p) }

func (j *fakeJIT) mkdir(p string) {
	j.t.Helper()
	if err := os.MkdirAll(j.path(p), 0o755); err != nil {
		j.t.Fatal(err)
	}
}

func (j *fakeJIT) write(p, text string) {
	j.t.Helper()
	j.mkdir(filepath.Dir(p))
	if err := os.WriteFile(j.path(p), []byte(text), 0o644); err != nil {
		j.t.Fatal(err)
	}
}

// started writes /proc/7/stat with start time ticks (and a command name
// holding ") " to check the parser skips it).
func (j *fakeJIT) started(ticks int) {
	j.write("/proc/7/stat", "7 (a) b) S"+strings.Repeat(" 1", 18)+" "+strconv.Itoa(ticks)+" 0 0\n")
}

// mapFile is the perf map as the process sees it: /tmp/perf-3.map.
const mapFile = "/proc/7/root/tmp/perf-3.map"

func (j *fakeJIT) appendMap(text string) {
	j.t.Helper()
	f, err := os.OpenFile(j.path(mapFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		j.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		j.t.Fatal(err)
	}
}

// names symbolizes offsets from fakeJITBase.
func (j *fakeJIT) names(offs ...uint64) []string {
	var addrs []uint64
	for _, o := range offs {
		addrs = append(addrs, fakeJITBase+o)
	}
	var out []string
	for _, f := range j.sym.Frames(7, "", addrs) {
		out = append(out, frameName(f))
	}
	return out
}

func (j *fakeJIT) want(got []string, want ...string) {
	j.t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		j.t.Errorf("names = %q, want %q", got, want)
	}
}

// The perf map of the namespace pid is read at the snapshot, read again
// for what was appended when an address is missing, and, once the process
// is gone, through the descriptor kept open (the file deleted too), with
// its last line even without a newline.
func TestJITMapAppendAndExit(t *testing.T) {
	j := newFakeJIT(t)
	j.appendMap("7f0000001000 100 JS:*fib /tmp/fib.js:1:13\n")
	if err := j.sym.History().Snapshot(7); err != nil {
		t.Fatal(err)
	}
	j.appendMap("7f0000002000 80 JS:~inner /tmp/a b.js:2:1\n7f0000100000 40 Stub:la")
	fs := j.sym.Frames(7, "", []uint64{fakeJITBase + 0x1010})
	if f := fs[0]; f.Name != "JS:*fib /tmp/fib.js:1:13" || f.Address != fakeJITBase+0x1010 || f.Module != "[anon]" || f.File != "" {
		t.Errorf("frame = %+v", f)
	}
	j.want(j.names(0x2000, 0x3000, 0x100000), "JS:~inner /tmp/a b.js:2:1", "[anon]+0x3000", "0x7f0000100000")
	j.appendMap("te")
	if err := os.Remove(j.path(mapFile)); err != nil {
		t.Fatal(err)
	}
	os.Remove(j.path("/proc/7/stat"))
	if f := j.sym.Frames(7, "", []uint64{fakeJITBase + 0x100008})[0]; f.Name != "Stub:late" || f.Address != fakeJITBase+0x100008 || f.Module != "[anon]" {
		t.Errorf("frame outside every mapping = %+v, want Stub:late+8 in [anon]", f)
	}
	if n := j.sym.History().PerfMapsHeld(); n != 0 {
		t.Errorf("%d perf maps still open after the process is gone", n)
	}
}

// A pid reused by another process (another start time) is not read for
// it; neither is a file rewritten (shorter, or as long with other lines).
func TestJITMapReuseAndRewrite(t *testing.T) {
	j := newFakeJIT(t)
	j.appendMap("7f0000001000 100 first\n")
	j.sym.History().Snapshot(7)
	j.started(99999)
	j.appendMap("7f0000002000 100 other process\n")
	j.want(j.names(0x1000, 0x2000), "first", "[anon]+0x2000")

	for _, rewrite := range []string{"1 1 x\n", "7f0000009000 100 other\n7f0000002000 100 second\n"} {
		j = newFakeJIT(t)
		j.appendMap("7f0000001000 100 first\n")
		j.sym.History().Snapshot(7)
		j.write(mapFile, rewrite)
		j.want(j.names(0x1000, 0x2000), "first", "[anon]+0x2000")
		j.appendMap("7f0000003000 100 third\n")
		j.want(j.names(0x3000), "[anon]+0x3000")
	}
}

// File-backed mappings are named from their ELF objects only: a perf map
// line over them is ignored.
func TestJITMapOnlyAnonymous(t *testing.T) {
	j := newFakeJIT(t)
	j.write("/proc/7/maps", "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"+
		"7f0000020000-7f0000021000 r-xp 00000000 08:01 5 /usr/bin/x\n")
	j.appendMap("7f0000020000 1000 not-this\n7f0000000000 10000 anon\n")
	j.sym.History().Snapshot(7)
	j.want(j.names(0x20005, 0x5), "x+0x5", "anon")
}

// An exec record handled while the process runs reads its perf map again
// (the one read may be the old image's); handled once it is gone (at the
// end of a run), it keeps the map read, which still reads what was
// appended. Mappings recorded as perf names anonymous memory ("//anon")
// are no file.
func TestJITMapExecReset(t *testing.T) {
	for _, alive := range []bool{true, false} {
		j := newFakeJIT(t)
		j.appendMap("7f0000001000 100 before\n")
		j.sym.History().Snapshot(7)
		j.write(mapFile, "7f0000001000 100 after-exec\n")
		if !alive {
			j.write(mapFile, "7f0000001000 100 before\n7f0000002000 100 appended\n")
			os.Remove(j.path("/proc/7/stat"))
		}
		j.sym.History().ExecReset(7, "jit")
		j.sym.History().AddMapping(7, procmaps.Mapping{Start: fakeJITBase, End: fakeJITBase + 0x10000, Perms: "r-xp", Path: "//anon"})
		if alive {
			j.want(j.names(0x1000, 0x2000), "after-exec", "[anon]+0x2000")
		} else {
			j.want(j.names(0x1000, 0x2000), "before", "appended")
		}
		if n := j.sym.History().PerfMapsHeld(); n != map[bool]int{true: 1, false: 0}[alive] {
			t.Errorf("alive %v: %d perf maps open", alive, n)
		}
	}
}

// The process's /tmp is kept open from the snapshot: a map written after
// it, by a process gone by the time of Frames, is still found. Prune reads
// and closes the maps of processes gone, and leaves the others open.
func TestJITMapWrittenAfterSnapshotThenExit(t *testing.T) {
	for _, prune := range []bool{false, true} {
		j := newFakeJIT(t)
		j.sym.History().Snapshot(7)
		j.appendMap("7f0000001000 100 late\n")
		alive := func(int) bool { return true }
		if j.sym.History().Prune(time.Hour, alive); j.sym.History().PerfMapsHeld() != 1 {
			t.Errorf("Prune closed the perf map of a running process")
		}
		if err := os.Rename(j.path("/proc/7"), j.path("/proc/gone")); err != nil {
			t.Fatal(err)
		}
		if prune {
			j.sym.History().Prune(time.Hour, func(int) bool { return false })
			if n := j.sym.History().PerfMapsHeld(); n != 0 {
				t.Errorf("%d perf maps still open after Prune saw the process gone", n)
			}
		}
		j.want(j.names(0x1000), "late")
		if n := j.sym.History().PerfMapsHeld(); n != 0 {
			t.Errorf("%d perf maps still open after the process is gone", n)
		}
	}
}

// Files that are not the process's map are not read: one older than the
// process (an earlier process with the pid), a FIFO (must not hang), a
// link out of its /tmp.
func TestJITMapNotItsFile(t *testing.T) {
	for _, c := range []string{"stale", "fifo", "symlink"} {
		t.Run(c, func(t *testing.T) {
			j := newFakeJIT(t)
			switch c {
			case "stale":
				j.appendMap("7f0000001000 100 old\n")
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(j.path(mapFile), old, old); err != nil {
					t.Fatal(err)
				}
			case "fifo":
				if err := syscall.Mkfifo(j.path(mapFile), 0o644); err != nil {
					t.Fatal(err)
				}
			case "symlink":
				j.write("/outside.map", "7f0000001000 100 outside\n")
				if err := os.Symlink("../../../../outside.map", j.path(mapFile)); err != nil {
					t.Fatal(err)
				}
			}
			j.sym.History().Snapshot(7)
			j.want(j.names(0x1000), "[anon]+0x1000")
		})
	}
}

// A child symbolized with its parent's mappings (Inherit) keeps its own
// perf map, and only its own.
func TestJITMapInherit(t *testing.T) {
	j := newFakeJIT(t)
	j.write("/proc/7/maps", "") // read while it exits: no mappings
	j.appendMap("7f0000001000 100 child\n")
	j.sym.History().Snapshot(7)
	j.write("/proc/8/maps", "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n")
	j.write("/proc/8/stat", "8 (p) S"+strings.Repeat(" 1", 18)+" 100 0 0\n")
	j.write("/proc/8/root/tmp/perf-8.map", "7f0000002000 100 parent\n")
	j.sym.History().Inherit(7, 8)
	j.want(j.names(0x1000, 0x2000), "child", "[anon]+0x2000")
	j.sym.History().Forget(7)
	if n := j.sym.History().PerfMapsHeld(); n != 1 {
		t.Errorf("%d perf maps open after the child is forgotten, want 1 (the parent's)", n)
	}
}

// A forked child seen only through its [uprobes] page (the kernel maps it
// at the child's first uprobe hit, and the mapping record comes before the
// child's notice) still inherits its parent's file mappings; a child that
// mapped files of its own (an exec) does not.
func TestInheritForkedChild(t *testing.T) {
	j := newFakeJIT(t)
	os.Remove(j.path("/proc/7/maps")) // the child is gone
	j.write("/proc/8/maps", "5500000000-5500001000 r-xp 00001000 fe:00 42 /usr/bin/app\n")
	uprobes := procmaps.Mapping{Start: 0x7fffffffe000, End: 0x7ffffffff000, Perms: "r-xp", Path: "[uprobes]"}
	j.sym.History().AddMapping(7, uprobes)
	j.sym.History().Inherit(7, 8)
	if got := j.sym.History().Mappings(7, "", nil); len(got) != 2 || got[0].Path != "/usr/bin/app" || got[1].Path != "[uprobes]" {
		t.Errorf("child's mappings %v, want the parent's app and its own [uprobes]", got)
	}
	own := procmaps.Mapping{Start: 0x6600000000, End: 0x6600001000, Perms: "r-xp", Inode: 43, Path: "/usr/bin/other"}
	j.sym.History().AddMapping(9, own)
	j.sym.History().Inherit(9, 8)
	if got := j.sym.History().Mappings(9, "", nil); len(got) != 1 || got[0].Path != "/usr/bin/other" {
		t.Errorf("exec'd child's mappings %v, want only its own", got)
	}
}
