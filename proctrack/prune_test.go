package proctrack

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/monotime"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// A sweep lets go of what is kept per file once no known process maps
// the file: its byFile entry, its objects in Swept and, at the second
// sweep that finds it unused, the Index's object and its symbols. Files
// still mapped keep all of it.
func TestSweepEvictsUnmappedFiles(t *testing.T) {
	names := []string{"cxx", "chain-fp"}
	const pid0 = 1 << 30 // pids no process has: one per file
	for _, c := range []struct {
		name   string
		forget []int // indexes of names whose process is forgotten
	}{
		{"all mapped", nil},
		{"one forgotten", []int{0}},
		{"all forgotten", []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestHistory("")
			var objs []*objfile.Object
			for i, name := range names {
				m := maptest.FileMapping(t, maptest.Fixture(t, name), maptest.Fixture(t, name), 0x400000)
				s.SnapshotMaps(pid0+i, []procmaps.Mapping{m}, "")
				o := s.procs[pid0+i].open[m.Path]
				if o == nil {
					t.Fatalf("%s: no object read", name)
				}
				objs = append(objs, o)
			}
			held := s.idx.NumSymbols()
			for _, i := range c.forget {
				s.Forget(pid0 + i)
			}
			s.sweep()
			s.sweep()
			_, inUse, _ := s.Swept()
			files := map[*objfile.Object]bool{}
			for _, o := range s.byFile {
				files[o] = true
			}
			var heldGone int
			for i, o := range objs {
				kept := !slices.Contains(c.forget, i)
				if inUse[o] != kept || files[o] != kept {
					t.Errorf("%s: in use %v, in byFile %v; want kept %v", names[i], inUse[o], files[o], kept)
				}
				if !kept {
					heldGone += o.NumSymbols()
				}
			}
			if n, want := s.idx.Len(), len(names)-len(c.forget); n != want {
				t.Errorf("the Index holds %d objects, want %d", n, want)
			}
			if n := s.idx.NumSymbols(); n != held-heldGone {
				t.Errorf("the Index counts %d symbols held, want %d", n, held-heldGone)
			}
		})
	}
}

// Prune forgets recorded processes that never produced an event and are
// gone, after the grace period; snapshotted and running ones stay.
func TestHistoryPrune(t *testing.T) {
	s := newTestHistory("")
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

// A process given the pid of one that produced an event and was
// forgotten is never announced (the kernel announces a tgid once): Prune
// keeps it until it has been gone reusedGrace times the grace, for its
// counts to be merged with names; a pid never announced goes at once.
func TestHistoryPruneReusedPID(t *testing.T) {
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
			s := newTestHistory("")
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

// Prune makes the history forget the processes no longer in /proc that
// never produced an event, once their last record is old.
func TestPrune(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root)
	for _, pid := range []int{10, 11} {
		r.tr.OnMmap(mapped(pid, app))
		r.hist.procs[pid].last = time.Now().Add(-time.Hour)
	}
	if n := r.tr.Prune(); n != 1 || !r.known(10) || r.known(11) {
		t.Errorf("pruned %d; 10 known %v, 11 known %v; want 1, true, false", n, r.known(10), r.known(11))
	}
}

// Alive asks /proc; Forget makes the history forget the process.
func TestAliveForget(t *testing.T) {
	r := newRig(t, nil)
	r.proc.process(10, r.proc.root)
	if !r.tr.Alive(10) || r.tr.Alive(11) {
		t.Errorf("Alive(10) = %v, Alive(11) = %v; want true, false", r.tr.Alive(10), r.tr.Alive(11))
	}
	r.tr.OnMmap(mapped(11, heap(0x600000)))
	r.tr.Forget(11)
	if r.known(11) {
		t.Error("pid 11 is known after Forget")
	}
}

// Once no tracked process maps a file, the sweep an exit starts lets go
// of its table (after tableIdle: none here), and the kernel side forgets
// the file; a file another process still maps keeps its table, and a
// file mapped again gets its table anew.
func TestTablesEvicted(t *testing.T) {
	r := newRig(t, nil)
	r.tr.tables.idle = 0
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, app, lib)
	r.proc.process(11, r.proc.root, app)
	r.seen(10)
	r.seen(11)
	if n := r.tr.tables.cache.Len(); n != 2 {
		t.Fatalf("%d tables, want app's and liba's", n)
	}
	r.tr.OnProcessEvent(exited(10))
	if n := r.tr.tables.cache.Len(); n != 1 {
		t.Errorf("after the only process mapping liba exited: %d tables, want app's alone", n)
	}
	r.wantKernel(fmt.Sprintf("ForgetFiles [%s/%d]", lib.Dev, lib.Inode))
	r.proc.process(12, r.proc.root, app, lib)
	r.seen(12)
	if n := r.tr.tables.cache.Len(); n != 2 {
		t.Errorf("liba mapped again: %d tables, want 2", n)
	}
}

// A fork record of a pid whose earlier process produced an event and is
// still known (its counts not merged yet): only a /proc read made since
// the fork carries that process's mark (seen) over to the new one. With
// the old read's mark, the new process, which produced nothing, would
// never be pruned; with a read since the fork, it produced an event and
// is kept.
func TestForkReusedPID(t *testing.T) {
	g := newGenRoot(t)
	for _, c := range []struct {
		name      string
		readAfter bool // the pid read again after its fork record
		kept      bool
	}{
		{"read before the fork: the old process's", false, false},
		{"read after the fork: the new process's", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestHistory(g.root)
			g.snapshot(s, 40, "sh", g.sh)
			g.snapshot(s, 70, "old", g.tr) // the pid's first process produced an event
			fork := monotime.Now()
			s.Fork(70, 40, fork)
			if c.readAfter {
				g.snapshot(s, 70, "sh", g.sh)
			}
			s.mu.Lock()
			s.procs[70].last = time.Now().Add(-time.Hour)
			s.mu.Unlock()
			dead := func(int) bool { return false }
			s.Prune(0, dead)
			s.mu.Lock()
			_, kept := s.procs[70]
			s.mu.Unlock()
			if kept != c.kept {
				t.Errorf("pid 70 kept after Prune: %v, want %v", kept, c.kept)
			}
		})
	}
}

// Forget leaves a pid that runs again alone: it is another process's by
// then, and what is known of it is that process's.
func TestForgetReusedPID(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root)
	r.tr.OnMmap(mapped(10, app))
	r.tr.Forget(10) // the counts of pid 10's earlier process, merged
	if !r.known(10) {
		t.Error("the process running on pid 10 was forgotten with the one before it")
	}
}
