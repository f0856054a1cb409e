package bpf

import (
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
)

// Samples in the vDSO of a process probee never registered unwind
// through the table built from probee's own copy of the image, found by
// the key vma.h gives a process's vDSO mapping (it has no file): the
// tables of clock-nofp, libc, ld.so and the vDSO are loaded only by file.
// In a sampling event bpf_find_vma works once, so the walk steps out of
// the vDSO by its table, then hands the stack over at libc; finished in
// user space, as proctrack does, every stack is complete down to _start.
// Without the vDSO's key the kernel steps out of the vDSO by frame
// pointers, which lose the caller where a vDSO function has not set up its
// frame (9 of 965 samples cut short in one run).
func TestFileTablesVDSO(t *testing.T) {
	gateFindVMA(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "clock-nofp")))
	s := openSession(t, Options{DWARF: true, FilterPIDs: true})
	cache := unwind.NewCache()
	loadVDSOFixtureTables(t, s, cache, bin)
	var mu sync.Mutex
	var deferred []wire.DeferredStack
	stop, err := s.Deferred(func(d wire.DeferredStack) { mu.Lock(); deferred = append(deferred, d); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AttachSampling(999); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "1", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPID(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)             // ld.so has mapped libc; the loop starts at 300 ms
	mods, _, err := cache.Process(cmd.Process.Pid) // for the user-space finish
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	s.Detach()
	stop()
	snap, err := s.Drain(1)
	if err != nil {
		t.Fatal(err)
	}
	checkVDSOStacks(t, snap, deferred, mods)
}

// loadVDSOFixtureTables loads the tables of bin, libc, ld.so and the vDSO
// by file only.
func loadVDSOFixtureTables(t *testing.T, s *Session, cache *unwind.Cache, bin string) {
	t.Helper()
	vdso, err := cache.VDSOModule()
	if err != nil {
		t.Fatal(err)
	}
	mods := []unwind.Module{execModule(t, cache, bin, 0x555555554000), vdso}
	for _, lib := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
		path, err := filepath.EvalSymlinks(lib)
		if err != nil {
			t.Skipf("no %s to unwind through: %v", lib, err)
		}
		mods = append(mods, execModule(t, cache, path, 0x7ffff7d80000))
	}
	if err := s.SetFileModules(mods); err != nil {
		t.Fatal(err)
	}
}

// checkVDSOStacks wants >= 50 samples in the vDSO (by mods), every one
// complete once finished (8 frames: __vdso_clock_gettime and a helper,
// clock_gettime, c_read, c_loop, main, __libc_start_call_main,
// __libc_start_main, _start).
func checkVDSOStacks(t *testing.T, snap *Snapshot, deferred []wire.DeferredStack, mods []unwind.Module) {
	t.Helper()
	vdso := slices.IndexFunc(mods, func(m unwind.Module) bool { return m.Path == unwind.VDSOPath })
	if vdso < 0 {
		t.Fatal("the process's modules have no vDSO")
	}
	inVDSO := func(pc uint64) bool { return pc >= mods[vdso].Start && pc < mods[vdso].End }
	var in, complete uint64
	add := func(user []uint64, truncated bool, n uint64) {
		if len(user) == 0 || !inVDSO(user[0]) {
			return
		}
		in += n
		if len(user) >= 8 && !truncated {
			complete += n
		} else {
			t.Logf("short stack (%d): %x", n, user)
		}
	}
	for _, c := range snap.Counts {
		add(c.User.PCs(), c.UserTruncated, c.Count)
	}
	for _, d := range deferred {
		frames, stop := unwind.UnwindFrom(d.Regs, d.Exact, d.Stack, mods, 256)
		user := slices.Clone(d.PCs)
		for _, f := range frames {
			user = append(user, f.PC)
		}
		add(user, stop != unwind.StopEndOfStack, 1)
	}
	t.Logf("%d samples in the vDSO, %d complete; %d handed over; drops %v", in, complete, len(deferred), snap.Drops)
	if in < 50 || complete != in {
		t.Errorf("%d of %d samples in the vDSO complete, want all of >= 50", complete, in)
	}
}
