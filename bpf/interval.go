package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
)

// Periodic drains (--interval) keep the kernel maps from filling on long
// runs. Events are counted in one of two maps (counts0, counts1) chosen by
// the BPF global active_counts. DrainInterval flips it, waits until every
// program that may still use the old map has returned (an RCU grace period,
// see rcuBarrier), then moves the old map's counts into Go (accumulator)
// and deletes them: no event is lost or counted twice. The user stacks those
// counts reference are copied to Go and deleted from ustacks (events seen
// later re-insert them: the BPF side inserts on a miss, under the same
// content hash). Kernel stacks are copied but never deleted during a
// session: their ids are bucket indexes of a preallocated map, which a
// different stack could take after a delete while the active map still
// refers to the old one.

// countKey is an aggregated count's key (probeeCountKey without padding).
type countKey struct {
	probe, tgid uint32
	comm        [16]int8
	ustack      uint64 // content hash of the user stack, 0: lost
	kstack      int32  // kernel stack id, -1: none
}

type userStack struct {
	pcs       []uint64
	truncated bool
}

// accumulator holds what has been drained from the kernel so far.
type accumulator struct {
	counts  map[countKey]uint64
	ustacks map[uint64]userStack
	kstacks map[int32][]uint64
}

func newAccumulator() accumulator {
	return accumulator{counts: map[countKey]uint64{}, ustacks: map[uint64]userStack{},
		kstacks: map[int32][]uint64{}}
}

// DrainInterval moves the counts gathered since the last drain from the
// kernel into the session's Go-side aggregation, which Drain includes. It
// is safe to call while probes are attached; calls are serialized.
func (s *Session) DrainInterval() error {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	old := s.active
	if err := s.objs.ActiveCounts.Set(1 - old); err != nil {
		return fmt.Errorf("switch counts map: %w", err)
	}
	s.active = 1 - old
	if err := s.rcuBarrier(); err != nil {
		return err
	}
	return s.drainCounts(s.countsMap(old))
}

func (s *Session) countsMap(i uint32) *ebpf.Map {
	if i == 0 {
		return s.objs.Counts0
	}
	return s.objs.Counts1
}

// rcuBarrier returns once every BPF program running when it was called has
// returned: updating a map-in-map makes the kernel call synchronize_rcu()
// (maybe_wait_bpf_programs in kernel/bpf/syscall.c; the kernel's selftests
// use the same fact), and non-sleepable programs run under rcu_read_lock.
func (s *Session) rcuBarrier() error {
	if s.barrier == nil {
		inner := &ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
		outer, err := ebpf.NewMap(&ebpf.MapSpec{Name: "probee_barrier", Type: ebpf.ArrayOfMaps,
			KeySize: 4, ValueSize: 4, MaxEntries: 1, InnerMap: inner})
		if err != nil {
			return fmt.Errorf("create grace-period map: %w", err)
		}
		if s.barrierInner, err = ebpf.NewMap(inner); err != nil {
			outer.Close()
			return fmt.Errorf("create grace-period map: %w", err)
		}
		s.barrier = outer
	}
	if err := s.barrier.Put(uint32(0), s.barrierInner); err != nil {
		return fmt.Errorf("wait for running BPF programs: %w", err)
	}
	return nil
}

func (s *Session) closeBarrier() {
	if s.barrier != nil {
		s.barrier.Close()
		s.barrierInner.Close()
		s.barrier, s.barrierInner = nil, nil
	}
}

// drainCounts moves every count of m (which no program writes any more)
// into the accumulator, with the stacks they reference, and clears m.
func (s *Session) drainCounts(m *ebpf.Map) error {
	var (
		key  probeeCountKey
		val  uint64
		keys []probeeCountKey
	)
	it := m.Iterate()
	for it.Next(&key, &val) {
		k := countKey{probe: key.Probe, tgid: key.Tgid, comm: key.Comm, ustack: key.Ustack, kstack: key.Kstack}
		s.acc.counts[k] += val
		s.copyUser(key.Ustack)
		s.copyKernel(key.Kstack)
		keys = append(keys, key)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read counts: %w", err)
	}
	for _, k := range keys {
		if err := m.Delete(&k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear counts: %w", err)
		}
	}
	for _, k := range keys {
		if k.Ustack != 0 {
			s.objs.Ustacks.Delete(k.Ustack) // copied; re-inserted on the next hit
		}
	}
	return nil
}

// copyUser copies user stack id to Go unless it is there already.
func (s *Session) copyUser(id uint64) {
	if id == 0 {
		return
	}
	if _, ok := s.acc.ustacks[id]; ok {
		return
	}
	var st probeeUserStack
	if s.objs.Ustacks.Lookup(id, &st) != nil {
		return // reported as lost
	}
	n := min(int(st.Len), len(st.Pcs))
	s.acc.ustacks[id] = userStack{pcs: append([]uint64(nil), st.Pcs[:n]...), truncated: st.Flags&1 != 0}
}

// copyKernel copies kernel stack id to Go unless it is there already.
func (s *Session) copyKernel(id int32) {
	if id < 0 {
		return
	}
	if _, ok := s.acc.kstacks[id]; ok {
		return
	}
	var raw [127]uint64
	if s.objs.Kstacks.Lookup(uint32(id), &raw) != nil {
		return
	}
	var pcs []uint64
	for _, pc := range raw {
		if pc == 0 {
			break
		}
		pcs = append(pcs, pc)
	}
	s.acc.kstacks[id] = pcs
}
