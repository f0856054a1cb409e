package bpf

import (
	"slices"
	"testing"
	"time"
)

// TakeGone hands over the counts of a process gone for goneTakes takes and
// goneGrace, with their stacks, and frees the stacks nothing names any
// more unless the last take moved them; a running process keeps its
// counts, and stacks it shares stay.
func TestTakeGone(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	a := &s.acc
	a.take = 5
	a.ustacks[0x11] = userStack{pcs: []uint64{1, 2}, take: 4}     // pid 1's
	a.ustacks[0x22] = userStack{pcs: []uint64{3, 4}, take: 4}     // pid 2's
	a.ustacks[0x33] = userStack{pcs: []uint64{5}, take: 7}        // named by no count yet: moved by take 7, the last at the hand-over
	a.kstacks[0x77] = kernelStack{pcs: []uint64{0xffff}, take: 3} // both pids'
	a.kstacks[0x88] = kernelStack{pcs: []uint64{0xfffe}, take: 3} // pid 2's
	a.addCount(countKey{tgid: 1, ustack: 0x11, kstack: 0x77}, 3)
	a.addCount(countKey{tgid: 2, ustack: 0x22, kstack: 0x77}, 4)
	a.addCount(countKey{tgid: 2, ustack: 0x22, kstack: 0x88}, 1)
	alive := func(tgid int) bool { return tgid == 1 }
	t0 := time.Unix(1000, 0)
	steps := []struct {
		take uint32
		at   time.Duration
		want int // counts handed over
	}{
		{5, 0, 0},                // found gone now
		{6, 20 * time.Second, 0}, // one take since
		{7, 5 * time.Second, 0},  // two takes, too soon
		{7, 10 * time.Second, 2},
		{8, 30 * time.Second, 0}, // nothing left of pid 2
	}
	for i, st := range steps {
		a.take = st.take
		got := s.TakeGone(alive, t0.Add(st.at))
		if len(got) != st.want {
			t.Fatalf("step %d: %d counts handed over, want %d", i, len(got), st.want)
		}
		for _, c := range got {
			if c.TGID != 2 || !slices.Equal(c.User, []uint64{3, 4}) || len(c.Kernel) != 1 {
				t.Errorf("step %d: count %+v, want pid 2's with its stacks", i, c)
			}
		}
	}
	if len(a.counts) != 1 || a.counts[countKey{tgid: 1, ustack: 0x11, kstack: 0x77}] != 3 {
		t.Errorf("counts left %v, want pid 1's", a.counts)
	}
	for _, h := range []uint64{0x11, 0x33} {
		if _, ok := a.ustacks[h]; !ok {
			t.Errorf("user stack %#x freed", h)
		}
	}
	if _, ok := a.ustacks[0x22]; ok {
		t.Error("pid 2's user stack kept")
	}
	if _, ok := a.kstacks[0x77]; !ok {
		t.Error("the shared kernel stack freed")
	}
	if _, ok := a.kstacks[0x88]; ok {
		t.Error("pid 2's kernel stack kept")
	}
	if len(a.gone) != 0 || len(a.procs) != 1 || a.procs[1] != 1 {
		t.Errorf("gone %v, procs %v after the hand-over; want none, pid 1's one key", a.gone, a.procs)
	}
}
