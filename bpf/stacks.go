package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
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
// frees a stack whose count was lost. Call with s.dmu held.
func (s *Session) takeStacks() error {
	s.acc.take++
	return errors.Join(
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
		u = userStack{pcs: clonePCs(pcs, n), flags: flags}
	}
	u.take = s.acc.take
	s.acc.ustacks[id] = u
}

// putKernel adds kernel stack id to the accumulator unless it is there
// already.
func (s *Session) putKernel(id uint64, n uint32, pcs []uint64) {
	k, ok := s.acc.kstacks[id]
	if !ok {
		k.pcs = clonePCs(pcs, n)
	}
	k.take = s.acc.take
	s.acc.kstacks[id] = k
}

// clonePCs copies the first n of pcs (n as the kernel wrote it: bounded).
func clonePCs(pcs []uint64, n uint32) []uint64 {
	return append([]uint64(nil), pcs[:min(int(n), len(pcs))]...)
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
