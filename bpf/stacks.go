package bpf

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"github.com/probee/probee/internal/prefixtree"
)

// stackBatch is the number of stacks moved per syscall (a deep user
// stack's value is 2 KiB).
const stackBatch = 256

// takeStacks moves every stack of the kernel's stack maps (the user stack
// maps of each depth class, kstacks) into the accumulator, in batches,
// after a drain took counts: those counts reference some of them, counts
// still in the kernel others (found in the accumulator when they are
// drained: a program stores the stack before it counts). Events seen later
// store their stacks again. Taking them all, where a drain used to look up
// and delete each stack a count named (two syscalls a stack), is also what
// frees a stack whose count was lost. The joins of --wakers go first
// (wakers.go). Call with s.dmu held.
func (s *Session) takeStacks() error {
	s.acc.take++
	s.acc.takeAt = time.Now().Unix()
	joins, jerr := s.takeJoins()
	defer s.putJoins(joins)
	return errors.Join(jerr,
		takeAll(s.objs.UstacksShort, func(k uint64, v *probeeUstackShort) { s.putUser(k, v.Len, v.Flags, v.Pcs[:]) }),
		takeAll(s.objs.UstacksMid, func(k uint64, v *probeeUstackMid) { s.putUser(k, v.Len, v.Flags, v.Pcs[:]) }),
		takeAll(s.objs.Ustacks, func(k uint64, v *probeeUserStack) { s.putUser(k, v.Len, v.Flags, v.Pcs[:]) }),
		takeAll(s.objs.Kstacks, func(k uint64, v *probeeKernelStack) { s.putKernel(k, v.Len, v.Pcs[:]) }),
	)
}

// takeAll looks up and deletes every entry of m, stackBatch at a time,
// handing each to put.
func takeAll[V any](m *ebpf.Map, put func(uint64, *V)) error {
	keys := make([]uint64, stackBatch)
	vals := make([]V, stackBatch)
	var cursor ebpf.MapBatchCursor
	for {
		n, err := m.BatchLookupAndDelete(&cursor, keys, vals, nil)
		for i := range n {
			put(keys[i], &vals[i])
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil // the map is empty
		}
		if err != nil {
			return fmt.Errorf("take stacks: %w", err)
		}
	}
}

// putUser adds user stack id to the accumulator unless it is there
// already, and stamps it with the take (fold.go).
func (s *Session) putUser(id uint64, n, flags uint32, pcs []uint64) {
	u, ok := s.acc.ustacks[id]
	if !ok {
		u = userStack{node: s.acc.pcs.AddReversed(pcs[:min(int(n), len(pcs))]), flags: flags}
	}
	u.take, u.at = s.acc.take, s.acc.takeAt
	s.acc.ustacks[id] = u
}

// putKernel adds kernel stack id to the accumulator unless it is there
// already.
func (s *Session) putKernel(id uint64, n uint32, pcs []uint64) {
	k, ok := s.acc.kstacks[id]
	if !ok {
		k.node = s.acc.pcs.AddReversed(pcs[:min(int(n), len(pcs))])
	}
	k.take, k.at = s.acc.take, s.acc.takeAt
	s.acc.kstacks[id] = k
}

// Stack is a captured stack: its pcs, leaf first, held in a tree shared
// by all stacks of a session's drains (package prefixtree: 2M distinct
// stacks of 46 frames took 760 MB as slices). The zero Stack is empty.
// Stacks stay valid and readable from any goroutine while the session
// goes on.
type Stack struct {
	t *prefixtree.Tree[uint64]
	n prefixtree.Node
}

// StackOf is a Stack of pcs (leaf first) in a tree of its own, for tests
// and callers that make counts themselves.
func StackOf(pcs ...uint64) Stack {
	t := prefixtree.New[uint64]()
	return Stack{t, t.AddReversed(pcs)}
}

// AppendPCs appends s's pcs to dst, leaf first.
func (s Stack) AppendPCs(dst []uint64) []uint64 {
	if s.t == nil {
		return dst
	}
	return s.t.AppendReversed(dst, s.n)
}

// PCs is s's pcs, leaf first, in a new slice (nil when empty).
func (s Stack) PCs() []uint64 { return s.AppendPCs(nil) }

// Len is the number of pcs.
func (s Stack) Len() int {
	if s.t == nil {
		return 0
	}
	return s.t.Depth(s.n)
}

// Empty says whether s has no pcs.
func (s Stack) Empty() bool { return s.n == prefixtree.Root }

// compareStacks orders stacks of one tree by when they were first seen
// (their nodes), and stacks of two trees by their pcs, leaf first, as
// slices.Compare would. Comparing pcs walks two paths of the tree, one
// cache miss a pc: sorting 2M counts that way took 20 s, and every
// output sorts its own way.
func compareStacks(a, b Stack) int {
	if a.t == b.t || a.Empty() || b.Empty() {
		return cmp.Compare(a.n, b.n)
	}
	for a != b {
		switch {
		case a.Empty() && b.Empty():
			return 0 // equal, in two trees
		case a.Empty():
			return -1
		case b.Empty():
			return 1
		}
		if c := cmp.Compare(a.t.Value(a.n), b.t.Value(b.n)); c != 0 {
			return c
		}
		a.n, b.n = a.t.Parent(a.n), b.t.Parent(b.n)
	}
	return 0
}

// copyKernel copies kernel stack id to Go unless it is there already (a
// deferred stack's, whose count user space makes).
func (s *Session) copyKernel(id uint64) {
	if id == 0 {
		return
	}
	if _, ok := s.acc.kstacks[id]; ok {
		return
	}
	var st probeeKernelStack
	if s.objs.Kstacks.Lookup(id, &st) != nil {
		return // the event is counted without its kernel stack
	}
	s.putKernel(id, st.Len, st.Pcs[:])
}

// PathOrder is counts' indices ordered by the path of their user stacks
// in tree, root first, depth first (rank is tree's Preorder), then by
// their kernel stacks': consecutive counts share most of their frames,
// so symbolizing and interning them in this order redoes little (2M
// distinct stacks of 46 frames: 10.6 s of interning in Counts' order).
// Stacks of another tree (tests') and empty ones come first; nil rank
// gives nil.
func PathOrder(counts []Count, tree *prefixtree.Tree[uint64], rank []uint32) []int32 {
	if rank == nil {
		return nil
	}
	at := func(s Stack) uint32 {
		if s.t != tree || int(s.n) >= len(rank) {
			return 0
		}
		return rank[s.n]
	}
	type key struct{ user, kernel uint32 }
	keys := make([]key, len(counts))
	order := make([]int32, len(counts))
	for i := range counts {
		keys[i], order[i] = key{at(counts[i].User), at(counts[i].Kernel)}, int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(keys[a].user, keys[b].user), cmp.Compare(keys[a].kernel, keys[b].kernel), cmp.Compare(a, b))
	})
	return order
}
