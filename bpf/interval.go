package bpf

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
)

// Periodic drains (--interval) keep the kernel maps from filling on long
// runs. Events are counted in one of two maps (counts0, counts1) chosen by
// counts_gate.active. DrainInterval switches it, waits until no program
// uses the old map any more (countsGate), then moves the old map's counts
// into Go (accumulator) and deletes them: no event is lost or counted
// twice. Then every user and kernel stack in the stack maps is moved to
// Go (takeStacks): events seen later re-insert theirs (the BPF side
// inserts on a miss, under the same content hash), and counts still in the
// kernel that name a moved stack find it in Go.
//
// An earlier version waited for an RCU grace period (by updating a
// map-in-map); under heavy uprobe load on this kernel that wait took
// minutes. The gate's busy counters make the wait as long as the slowest
// event in flight: microseconds.

// DrainStats describes the periodic drains of a session.
type DrainStats struct {
	Drains   int           // old map drained
	Deferred int           // old map still busy after drainWait: drained later
	Moved    uint64        // events moved to Go
	MaxWait  time.Duration // longest wait for the old map to fall idle
}

// drainWait bounds how long DrainInterval waits for events still counting
// in the old map; a busy map is drained by a later call instead. A var for
// tests.
var drainWait = time.Second

// DrainInterval moves the counts gathered since the last drain from the
// kernel into the session's Go-side aggregation, which Drain includes. It
// is safe to call while probes are attached; calls are serialized.
func (s *Session) DrainInterval() error {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if !s.switched {
		for k := range s.addedAt {
			s.addedAt[k] = s.gate.added(k)
		}
		s.active = 1 - s.active
		s.gate.switchTo(s.active)
		s.switched = true
	}
	old := 1 - s.active
	start := time.Now()
	idle := s.gate.waitIdle(old, drainWait)
	s.stats.MaxWait = max(s.stats.MaxWait, time.Since(start))
	if !idle {
		s.stats.Deferred++
		return nil
	}
	s.switched = false
	s.stats.Drains++
	moved, err := s.drainCounts(s.countsMap(old))
	s.stats.Moved += moved
	if err != nil {
		return err
	}
	moved, err = s.drainMeasures(s.measuresMap(old))
	s.stats.Moved += moved
	// The counts moved name stacks whatever became of the measures.
	err = errors.Join(err, s.takeStacks())
	s.acc.resolve()
	now := time.Now()
	if s.acc.pruneDue(now) {
		s.pinOpenWaits() // not at every early drain: a walk of every open wait
	}
	s.acc.pruneHashes(now)
	return err
}

// DrainDue reports whether the keys added to a kernel map since the last
// drain began fill half of it: events arrive faster than the interval
// empties the maps (a system-wide start, a burst of new stacks), and a
// drain now keeps them from filling, where events would be lost. It
// reads shared memory only: cheap to ask every few milliseconds.
func (s *Session) DrainDue() bool {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	caps := [addedKinds]uint32{addedCounts: s.objs.Counts0.MaxEntries(), addedKstacks: s.objs.Kstacks.MaxEntries()}
	for i, m := range s.objs.ustackMaps() {
		caps[addedUstacks+i] = m.MaxEntries()
	}
	for k, c := range caps {
		if s.gate.added(k)-s.addedAt[k] >= uint64(c)/2 {
			return true
		}
	}
	return false
}

// DrainStats returns the periodic drains' figures so far.
func (s *Session) DrainStats() DrainStats {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.stats
}

func (s *Session) countsMap(i uint32) *ebpf.Map {
	if i == 0 {
		return s.objs.Counts0
	}
	return s.objs.Counts1
}

// drainCounts moves every count of m (which no program writes any more)
// into the accumulator (the stacks they name follow: takeStacks), and
// clears m. It returns the number of events moved. Counts are taken and
// deleted in batches (one syscall per drainBatch keys), so a failure part
// way moves only what it deleted: nothing is counted twice.
func (s *Session) drainCounts(m *ebpf.Map) (moved uint64, err error) {
	if s.batchKeys == nil { // kept: a drain a second should not make garbage
		s.batchKeys = make([]probeeCountKey, drainBatch)
		s.batchVals = make([]uint64, drainBatch)
	}
	keys, vals := s.batchKeys, s.batchVals
	var cursor ebpf.MapBatchCursor
	for {
		n, err := m.BatchLookupAndDelete(&cursor, keys, vals, nil)
		moved += s.takeCounts(keys[:n], vals[:n])
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return moved, nil // the map is empty
		}
		if err != nil {
			return moved, fmt.Errorf("drain counts: %w", err)
		}
	}
}

// drainBatch is the number of counts moved per syscall.
const drainBatch = 4096

// takeCounts adds counts taken from the kernel to the accumulator (the
// stacks they reference follow: takeStacks).
func (s *Session) takeCounts(keys []probeeCountKey, vals []uint64) (moved uint64) {
	for i, key := range keys {
		s.acc.pending = append(s.acc.pending, pendingCount{key: rawKeyOf(key), val: measureVal{calls: vals[i]}})
		moved += vals[i]
	}
	return moved
}
