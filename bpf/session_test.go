package bpf

import (
	"context"
	"debug/elf"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/probee/probee/bpf/wire"
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

// gateFindVMA skips a test of the unwinder's lookup by file identity on a
// kernel without bpf_find_vma (root needed); under PROBEE_REQUIRE_KERNEL=1
// a 5.17+ kernel must have it.
func gateFindVMA(t *testing.T) {
	t.Helper()
	testgate.Root(t)
	if !HaveFindVMA() {
		testgate.Feature(t, "bpf_find_vma", testgate.KernelAtLeast(5, 17), errors.New("the kernel has no bpf_find_vma"))
	}
}

// gateMulti skips a test of uprobe_multi links on a kernel without them;
// under PROBEE_REQUIRE_KERNEL=1 a 6.6+ kernel must have them.
func gateMulti(t *testing.T, multi bool) {
	t.Helper()
	if multi {
		testgate.Feature(t, "uprobe_multi", testgate.KernelAtLeast(6, 6), haveMulti())
	}
}

// checkLinkKind fails t unless AttachUprobes made links of the kind asked
// for (it falls back to single links silently), by its stats and by the
// kernel's link info: one uprobe_multi link, or perf-event links.
func checkLinkKind(t *testing.T, s *Session, st AttachStats, multi bool) {
	t.Helper()
	if st.Multi != multi {
		t.Errorf("stats say multi %v, want %v: %+v", st.Multi, multi, st)
	}
	s.mu.Lock()
	links := slices.Clone(s.links)
	s.mu.Unlock()
	if len(links) == 0 || multi && len(links) != 1 {
		t.Fatalf("%d links, want %s", len(links), map[bool]string{true: "1", false: "some"}[multi])
	}
	for _, l := range links {
		info, err := l.Info()
		switch {
		case multi && (err != nil || info.Type != link.UprobeMultiType):
			t.Errorf("link %T: %+v %v, want an uprobe_multi link", l, info, err)
		case !multi && err == nil && info.Type == link.UprobeMultiType:
			t.Errorf("link %T is an uprobe_multi link, want single links", l)
		}
	}
}

func TestUprobeEntryStack(t *testing.T) {
	for _, multi := range []bool{true, false} {
		name := map[bool]string{true: "multi", false: "single"}[multi]
		t.Run(name, func(t *testing.T) {
			gateMulti(t, multi)
			bin := testgate.PrivateFixture(t, filepath.Join(fixtures, "chain-fp"))
			s := openSession(t, Options{})
			off := fileOffset(t, bin, "leaf")
			st, err := s.AttachUprobes(context.Background(), 7, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !multi)
			if err != nil || st.Attached != 1 {
				t.Fatalf("attach: %+v %v", st, err)
			}
			checkLinkKind(t, s, st, multi)
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
				if c.User.Len() < 6 { // leaf c b a main __libc_start_call_main...
					t.Errorf("user stack has %d frames, want >= 6: %x", c.User.Len(), c.User.PCs())
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

// A process announced to user space leaves seen when its task is freed,
// so that a process that takes its pid later is announced too (at ~350
// new processes a second the pid space wraps every ~90 s).
func TestSeenFreedWithTask(t *testing.T) {
	bin := testgate.PrivateFixture(t, filepath.Join(fixtures, "chain-fp"))
	s := openSession(t, Options{})
	off := fileOffset(t, bin, "leaf")
	if st, err := s.AttachUprobes(context.Background(), 0, []UprobeTarget{{Path: bin, Offset: off, Entry: true, Name: "leaf"}}, 0, !HaveUprobeMulti()); err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	announced := make(chan int, 16)
	stop, err := s.Events(func(ev wire.ProcessEvent) {
		if ev.Type == wire.EventNewProcess {
			announced <- ev.TGID
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cmd := exec.Command(bin, "10")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for got := 0; got != pid; {
		select {
		case got = <-announced:
		case <-time.After(5 * time.Second):
			t.Fatalf("pid %d never announced", pid)
		}
	}
	var v uint8
	deadline := time.Now().Add(5 * time.Second) // the task is freed after an RCU grace period
	for s.objs.Seen.Lookup(uint32(pid), &v) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still in seen 5 s after it was reaped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
