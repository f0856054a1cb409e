package symbolize

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// startSpin runs spin-nofp for a few seconds and returns its pid.
func startSpin(t *testing.T) (*exec.Cmd, string) {
	bin := fixture(t, "spin-nofp")
	cmd := exec.Command(bin, "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until the dynamic loader has mapped libc.
	maps := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "maps")
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(maps); strings.Contains(string(b), "libc.so.6") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, bin
}

func TestSymbolizerAfterExit(t *testing.T) {
	cmd, bin := startSpin(t)
	pid := cmd.Process.Pid
	sym := New(Config{})
	if err := sym.Snapshot(pid); err != nil {
		t.Fatal(err)
	}
	leaf := resolveOK(t, uspec(pathT(bin), probespec.MatchExact, "spin_leaf"))[0]
	malloc := resolveOK(t, uspec(libT("c"), probespec.MatchExact, "malloc"))[0]
	base := func(path string, fileOff uint64) uint64 {
		for _, m := range sym.procs[pid].maps {
			if statSame(m.Path, path) && fileOff >= m.Offset && fileOff-m.Offset < m.End-m.Start {
				return m.Start + fileOff - m.Offset
			}
		}
		t.Fatalf("%s+0x%x not mapped", path, fileOff)
		return 0
	}
	addrs := []uint64{base(bin, leaf.FileOffset) + 3, base(malloc.Path, malloc.FileOffset), 0x10}
	cmd.Process.Kill()
	cmd.Wait()
	fs := sym.Frames(pid, "", addrs)
	if fs[0].Function != "spin_leaf" || fs[0].Offset != 3 || fs[1].Function != "malloc" || fs[2].Name() != "[unknown]" {
		t.Errorf("frames = %+v", fs)
	}
}

func TestFrameNames(t *testing.T) {
	o, err := objfile.LoadObject(fixture(t, "cxx"), "")
	if err != nil {
		t.Fatal(err)
	}
	p := &procMaps{maps: []procmaps.Mapping{{Start: 0x1000, End: 0x100000, Perms: "r-xp", Path: o.Path}, {Start: 0x200000, End: 0x201000, Perms: "r-xp", Path: "[vdso]"}},
		open: map[string]*objfile.Object{o.Path: o}}
	var method uint64
	for i, s := range o.Funcs {
		if full, _ := o.DemangledName(i); full == "ns::Klass::method(int)" {
			method = s.Addr
		}
	}
	off, _ := o.FileOffset(method)
	got := []string{p.frame(0x1000 + off - 0).Name(), p.frame(0x200010).Name(), p.frame(0x1000 + 0x5).Name(), p.frame(0x5).Name()}
	want := []string{"ns::Klass::method(int)", "[vdso]+0x10", "cxx+0x5", "[unknown]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestKernelFrames(t *testing.T) {
	sym := New(Config{Kallsyms: "testdata/kallsyms"})
	fs := sym.KernelFrames([]uint64{0xffffffff81100010, 0xffffffffc0000104, 0x10})
	if fs[0].Name() != "vfs_read" || fs[0].Offset != 0x10 || fs[0].Module != "[kernel]" ||
		fs[1].Name() != "ext4_file_read_iter" || fs[1].Module != "[ext4]" || fs[2].Name() != "[kernel]+0x10" {
		t.Errorf("kernel frames = %+v", fs)
	}
}

// Prune forgets recorded processes that never produced an event and are
// gone, after the grace period; snapshotted and running ones stay.
func TestSymbolizerPrune(t *testing.T) {
	s := New(Config{})
	m := procmaps.Mapping{Start: 0x1000, End: 0x2000, Perms: "r-xp", Path: "/bin/true"}
	for _, pid := range []int{100001, 100002, 100003, 100004} {
		s.AddMapping(pid, m)
	}
	// 100004 produced an event, handled after it exited: its snapshot
	// fails, and what the records built is all it will be named by.
	if err := s.Snapshot(100004); err == nil {
		t.Fatal("snapshot of a pid that does not run succeeded")
	}
	self := os.Getpid()
	if err := s.Snapshot(self); err != nil {
		t.Fatal(err)
	}
	s.AddMapping(self, m)
	alive := func(pid int) bool { return pid == 100002 || pid == self }
	if n := s.Prune(time.Hour, alive); n != 0 {
		t.Errorf("pruned %d within the grace period, want 0", n)
	}
	if n := s.Prune(0, alive); n != 2 {
		t.Errorf("pruned %d, want 2 (the exited, never seen 100001 and 100003)", n)
	}
	for pid, want := range map[int]bool{100001: false, 100002: true, 100003: false, 100004: true, self: true} {
		s.mu.Lock()
		_, ok := s.procs[pid]
		s.mu.Unlock()
		if ok != want {
			t.Errorf("pid %d kept: %v, want %v", pid, ok, want)
		}
	}
	dead := func(int) bool { return false }
	if s.Prune(0, dead); len(s.procs) != 2 {
		t.Errorf("a process that produced an event was pruned: %d left, want 2", len(s.procs))
	}
}

// A frame in a process's [vdso] mapping is named from the kernel's vDSO
// image, by its "__vdso_" name rather than the plain alias.
func TestVDSOFrames(t *testing.T) {
	o := vdsoObject()
	if o == nil {
		t.Fatal("the vDSO image cannot be read")
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Name == "__vdso_clock_gettime" })
	if i < 0 {
		t.Fatal("no __vdso_clock_gettime in the vDSO's symbols")
	}
	img, _ := vdso.Image()
	const start = 0x7fff00000000
	p := &procMaps{maps: []procmaps.Mapping{{Start: start, End: start + uint64(len(img)), Perms: "r-xp", Path: vdso.Path}}}
	fr := p.frame(start + o.Funcs[i].Addr + 2)
	if fr.Name() != "__vdso_clock_gettime" || fr.Offset != 2 || fr.Module != vdso.Path {
		t.Errorf("frame = %+v, want __vdso_clock_gettime+2 in [vdso]", fr)
	}
}

// A function's frame carries the same VirtAddr (its address in the ELF
// file) in two processes that load the file at different addresses, and
// none where no object holds the address.
func TestFrameVirtAddr(t *testing.T) {
	o, err := objfile.LoadObject(fixture(t, "cxx"), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Size > 4 })
	if i < 0 {
		t.Fatal("no function in the fixture")
	}
	va := o.Funcs[i].Addr + 2
	off, _ := o.FileOffset(va)
	var got []uint64
	for _, start := range []uint64{0x1000, 0x7f0000001000} {
		p := &procMaps{maps: []procmaps.Mapping{{Start: start, End: start + 0x100000, Perms: "r-xp", Path: o.Path}},
			open: map[string]*objfile.Object{o.Path: o}}
		got = append(got, p.frame(start+off).VirtAddr, p.frame(start+0x200000).VirtAddr)
	}
	if want := []uint64{va, 0, va, 0}; !slices.Equal(got, want) {
		t.Errorf("VirtAddr at two load addresses = %#x, want %#x", got, want)
	}
}

// A process given the pid of one that produced an event and was
// forgotten is never announced (the kernel announces a tgid once): Prune
// keeps it until it has been gone reusedGrace times the grace, for its
// counts to be merged with names; a pid never announced goes at once.
func TestSymbolizerPruneReusedPID(t *testing.T) {
	const grace = time.Minute
	m := procmaps.Mapping{Start: 0x1000, End: 0x2000, Perms: "r-xp", Path: "/bin/true"}
	for _, c := range []struct {
		name      string
		announced bool
		goneFor   time.Duration // before the second Prune
		kept      bool
	}{
		{"never announced", false, 0, false},
		{"reused, just gone", true, 0, true},
		{"reused, gone two graces", true, 2 * grace, true},
		{"reused, gone past reusedGrace", true, (reusedGrace + 1) * grace, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{})
			const pid = 100001
			if c.announced {
				s.AddMapping(pid, m)
				_ = s.Snapshot(pid) // the event of the pid's first process, gone
				s.Forget(pid)       // its counts merged
			}
			s.AddMapping(pid, m) // the pid's next process: records, no notice
			dead := func(int) bool { return false }
			s.mu.Lock()
			s.procs[pid].last = time.Now().Add(-2 * grace)
			s.mu.Unlock()
			s.Prune(grace, dead)
			s.mu.Lock()
			if p := s.procs[pid]; p != nil {
				p.gone = p.gone.Add(-c.goneFor)
			}
			s.mu.Unlock()
			s.Prune(grace, dead)
			s.mu.Lock()
			_, kept := s.procs[pid]
			s.mu.Unlock()
			if kept != c.kept {
				t.Errorf("kept after two Prunes: %v, want %v", kept, c.kept)
			}
		})
	}
}
