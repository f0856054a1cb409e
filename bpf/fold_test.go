package bpf

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/probee/probee/internal/prefixtree"
)

// TakeGone hands over the counts of a process gone for goneTakes takes and
// goneGrace, with their stacks; a running process keeps its counts.
func TestTakeGone(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	a := &s.acc
	a.take = 5
	u1, u2 := a.pcs.AddReversed([]uint64{1, 2}), a.pcs.AddReversed([]uint64{3, 4})
	k1, k2 := a.pcs.AddReversed([]uint64{0xffff}), a.pcs.AddReversed([]uint64{0xfffe})
	a.addCount(countKey{tgid: 1, user: u1, kernel: k1}, 3)
	a.addCount(countKey{tgid: 2, user: u2, kernel: k1}, 4)
	a.addCount(countKey{tgid: 2, user: u2, kernel: k2}, 1)
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
	if len(a.counts) != 1 || a.counts[countKey{tgid: 1, user: u1, kernel: k1}] != 3 {
		t.Errorf("counts left %v, want pid 1's", a.counts)
	}
	if len(a.gone) != 0 || len(a.procs) != 1 || a.procs[1] != 1 {
		t.Errorf("gone %v, procs %v after the hand-over; want none, pid 1's one key", a.gone, a.procs)
	}
}

// Counts drained from the kernel find their stacks by hash once the take
// after them has moved the stacks; a hash is kept for the last two takes
// and keepHashes, then dropped; a hash that names no stack is a lost user
// stack (no kernel stack).
func TestResolveAndPruneHashes(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	a := &s.acc
	t0 := time.Unix(1000, 0)
	take := func(at time.Duration) {
		a.take++
		a.takeAt = t0.Add(at).Unix()
	}
	take(0)
	s.putUser(0x11, 2, stackTruncated, []uint64{1, 2})
	s.putKernel(0x77, 1, []uint64{0xffff})
	a.pending = append(a.pending,
		pendingCount{key: rawKey{tgid: 1, comm: [16]int8{'l', 's'}, ustack: 0x11, kstack: 0x77}, val: measureVal{calls: 2}},
		pendingCount{key: rawKey{tgid: 1, ustack: 0x12, kstack: 0x78}, val: measureVal{calls: 1}},
		pendingCount{key: rawKey{tgid: 1, ustack: 0x11}, val: measureVal{calls: 1, total: 50, max: 40}, measure: true})
	a.resolve()
	got := s.accCounts()
	if len(got) != 3 || len(a.pending) != 0 {
		t.Fatalf("%d counts, %d pending; want 3 and none", len(got), len(a.pending))
	}
	var found, lost, measured bool
	for _, c := range got {
		switch {
		case c.UserLost:
			lost = c.Kernel.Empty() && c.User.Empty()
		case c.Total == 50:
			measured = c.Max == 40 && slices.Equal(c.User.PCs(), []uint64{1, 2}) && c.Kernel.Empty()
		default:
			found = c.Comm == "ls" && c.UserTruncated && slices.Equal(c.User.PCs(), []uint64{1, 2}) &&
				slices.Equal(c.Kernel.PCs(), []uint64{0xffff}) && c.Count == 2
		}
	}
	if !found || !lost || !measured {
		t.Errorf("counts %+v: resolved %v, lost %v, measure %v", got, found, lost, measured)
	}
	steps := []struct {
		at   time.Duration
		kept bool
	}{
		{1 * time.Second, true},   // one take since
		{5 * time.Second, true},   // two takes, but within keepHashes
		{12 * time.Second, false}, // two takes and past keepHashes
	}
	for i, st := range steps {
		take(st.at)
		a.pruneHashes(t0.Add(st.at))
		_, u := a.ustacks[0x11]
		_, k := a.kstacks[0x77]
		if u != st.kept || k != st.kept {
			t.Errorf("step %d: user hash kept %v, kernel %v; want %v", i, u, k, st.kept)
		}
	}
}

// compactPCs rebuilds the pcs tree from the stacks that counts and hashes
// name: they read the same pcs, the nodes of stacks handed over are gone,
// and a Stack handed out before still reads its pcs from the old tree.
func TestCompactPCs(t *testing.T) {
	a := newAccumulator()
	stack := func(i uint64) []uint64 { return []uint64{i, i + 1, 0x400000} }
	kernel := a.pcs.AddReversed([]uint64{0xffff1, 0xffff2})
	for i := range uint64(minCompact) {
		a.addCount(countKey{tgid: uint32(i), user: a.pcs.AddReversed(stack(i)), kernel: kernel}, 1)
	}
	a.ustacks[1] = userStack{node: a.pcs.AddReversed(stack(1))}
	before := Stack{a.pcs, a.pcs.AddReversed(stack(7))}
	for k := range a.counts {
		if k.tgid%100 != 7 {
			delete(a.counts, k)
		}
	}
	a.compactPCs()
	if n := a.pcs.Len(); n > 4*len(a.counts)+10 {
		t.Errorf("%d nodes for %d counts left", n, len(a.counts))
	}
	for k := range a.counts {
		if got := (Stack{a.pcs, k.user}).PCs(); !slices.Equal(got, stack(uint64(k.tgid))) {
			t.Fatalf("count of %d reads %x after compaction", k.tgid, got)
		}
		if got := (Stack{a.pcs, k.kernel}).PCs(); !slices.Equal(got, []uint64{0xffff1, 0xffff2}) {
			t.Errorf("kernel stack reads %x", got)
		}
	}
	if got := (Stack{a.pcs, a.ustacks[1].node}).PCs(); !slices.Equal(got, stack(1)) {
		t.Errorf("a recent hash's stack reads %x", got)
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

// The hashes an open off-CPU wait names (pinned) outlive keepHashes: the
// wait can end, and be resolved, long after its stacks were taken.
func TestPinnedHashesKept(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	a := &s.acc
	t0 := time.Unix(1000, 0)
	a.take, a.takeAt = 1, t0.Unix()
	s.putUser(0x11, 1, 0, []uint64{1, 2})
	s.putKernel(0x77, 1, []uint64{0xffff})
	a.pinned[0x11], a.pinned[0x77] = true, true
	a.take = 5
	a.pruneHashes(t0.Add(time.Minute))
	if _, ok := a.ustacks[0x11]; !ok {
		t.Fatal("a pinned user stack hash was pruned")
	}
	if _, ok := a.kstacks[0x77]; !ok {
		t.Fatal("a pinned kernel stack hash was pruned")
	}
	clear(a.pinned)
	a.pruneHashes(t0.Add(2 * time.Minute))
	if len(a.ustacks)+len(a.kstacks) != 0 {
		t.Errorf("hashes kept once unpinned: %v %v", a.ustacks, a.kstacks)
	}
}

// PathOrder puts counts whose user stacks share a path next to each
// other (depth first from the root, pcs root first), a stack of another
// tree first, and is nil without ranks.
func TestPathOrder(t *testing.T) {
	tree := prefixtree.New[uint64]()
	in := func(pcs ...uint64) Stack { return Stack{tree, tree.AddReversed(pcs)} } // leaf first
	counts := []Count{
		{User: in(3, 2, 1)},    // 1 2 3
		{User: in(9, 8)},       // 8 9
		{User: in(4, 2, 1)},    // 1 2 4
		{User: in(5, 1)},       // 1 5
		{User: StackOf(7)},     // another tree
		{User: in(10, 9, 8)},   // 8 9 10
		{User: in(6, 3, 2, 1)}, // 1 2 3 6
	}
	order := PathOrder(counts, tree, tree.Preorder())
	if order[0] != 4 {
		t.Errorf("order %v: the stack of another tree is not first", order)
	}
	pos := map[int32]int{}
	for k, i := range order {
		pos[i] = k
	}
	adjacent := func(a, b int32) bool { return pos[a]-pos[b] == 1 || pos[b]-pos[a] == 1 }
	for _, pair := range [][2]int32{{0, 6}, {1, 5}} {
		if !adjacent(pair[0], pair[1]) {
			t.Errorf("order %v: counts %d and %d share a path and are apart", order, pair[0], pair[1])
		}
	}
	if pos[3] > pos[0] && pos[3] < pos[2] || pos[3] > pos[2] && pos[3] < pos[0] {
		t.Errorf("order %v: 1 5 lies between the two stacks below 1 2", order)
	}
	if PathOrder(counts, tree, nil) != nil {
		t.Error("PathOrder without ranks is not nil")
	}
}
