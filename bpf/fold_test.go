package bpf

import (
	"cmp"
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
	a.ustacks[0x11] = userStack{node: a.pcs.AddReversed([]uint64{1, 2}), take: 4}     // pid 1's
	a.ustacks[0x22] = userStack{node: a.pcs.AddReversed([]uint64{3, 4}), take: 4}     // pid 2's
	a.ustacks[0x33] = userStack{node: a.pcs.AddReversed([]uint64{5}), take: 7}        // named by no count yet: moved by take 7, the last at the hand-over
	a.kstacks[0x77] = kernelStack{node: a.pcs.AddReversed([]uint64{0xffff}), take: 3} // both pids'
	a.kstacks[0x88] = kernelStack{node: a.pcs.AddReversed([]uint64{0xfffe}), take: 3} // pid 2's
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
			if c.TGID != 2 || !slices.Equal(c.User.PCs(), []uint64{3, 4}) || c.Kernel.Len() != 1 {
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

// compactPCs rebuilds the pcs tree from the stacks left: they read the
// same pcs, the nodes of pruned stacks are gone, and a Stack handed out
// before still reads its pcs from the old tree.
func TestCompactPCs(t *testing.T) {
	a := newAccumulator()
	stack := func(i uint64) []uint64 { return []uint64{i, i + 1, 0x400000} }
	for i := range uint64(minCompact) {
		a.ustacks[i] = userStack{node: a.pcs.AddReversed(stack(i))}
	}
	a.kstacks[1] = kernelStack{node: a.pcs.AddReversed([]uint64{0xffff1, 0xffff2})}
	before := Stack{a.pcs, a.ustacks[7].node}
	for i := range uint64(minCompact) {
		if i%100 != 7 {
			delete(a.ustacks, i)
		}
	}
	a.compactPCs()
	if n := a.pcs.Len(); n > 4*len(a.ustacks)+3 {
		t.Errorf("%d nodes for %d user stacks left", n, len(a.ustacks))
	}
	for h, u := range a.ustacks {
		if got := (Stack{a.pcs, u.node}).PCs(); !slices.Equal(got, stack(h)) {
			t.Fatalf("stack %d reads %x after compaction", h, got)
		}
	}
	if got := (Stack{a.pcs, a.kstacks[1].node}).PCs(); !slices.Equal(got, []uint64{0xffff1, 0xffff2}) {
		t.Errorf("kernel stack reads %x", got)
	}
	if got := before.PCs(); !slices.Equal(got, stack(7)) {
		t.Errorf("a stack handed out before reads %x", got)
	}
	n := a.pcs.Len()
	a.compactPCs()
	if a.pcs.Len() != n {
		t.Errorf("compacted again at %d nodes", n)
	}
}

// compareStacks orders stacks of two trees as slices.Compare orders their
// pcs, and stacks of one tree as they were added.
func TestCompareStacks(t *testing.T) {
	a := newAccumulator()
	seqs := [][]uint64{nil, {1}, {1, 2}, {1, 3}, {2}, {2, 1}, {1, 2, 3}, {0, 9}}
	for _, x := range seqs {
		for _, y := range seqs {
			want := slices.Compare(x, y)
			if got := compareStacks(StackOf(x...), StackOf(y...)); got != want {
				t.Errorf("compare %v %v: %d in two trees, want %d", x, y, got, want)
			}
			sx, sy := Stack{a.pcs, a.pcs.AddReversed(x)}, Stack{a.pcs, a.pcs.AddReversed(y)}
			if got, want := compareStacks(sx, sy), cmp.Compare(sx.n, sy.n); got != want {
				t.Errorf("compare %v %v: %d in one tree, want %d", x, y, got, want)
			}
		}
	}
}
