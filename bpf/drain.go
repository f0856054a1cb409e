package bpf

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
)

// DropCause is why an event or part of it was lost (enum drop_cause in
// probee.h, the index of the drops map).
type DropCause int

// Drop causes.
const (
	DropCountsFull           = DropCause(probeeDropCauseDROP_COUNTS_FULL)
	DropUserStackFull        = DropCause(probeeDropCauseDROP_USTACK_FULL)
	DropUserStackCollision   = DropCause(probeeDropCauseDROP_USTACK_COLLISION)
	DropKernelStackError     = DropCause(probeeDropCauseDROP_KSTACK_ERROR)
	DropKernelStackCollision = DropCause(probeeDropCauseDROP_KSTACK_COLLISION)
	DropEventLost            = DropCause(probeeDropCauseDROP_EVENT_LOST)
	DropNoTables             = DropCause(probeeDropCauseDROP_NO_TABLES)  // DWARF: stack taken before the process's tables were loaded
	DropUnknownPC            = DropCause(probeeDropCauseDROP_UNKNOWN_PC) // DWARF: stack cut at a pc in no known mapping
	DropCountsSwitch         = DropCause(probeeDropCauseDROP_COUNTS_SWITCH)
	DropKernelStackFull      = DropCause(probeeDropCauseDROP_KSTACK_FULL)
	DropDeferLost            = DropCause(probeeDropCauseDROP_DEFER_LOST)  // a stack to finish in user space did not fit its ring (counted as partial)
	DropCut                  = DropCause(probeeDropCauseDROP_CUT)         // DWARF: stack cut where its unwind rules could not be followed
	DropOffCPUFull           = DropCause(probeeDropCauseDROP_OFFCPU_FULL) // --off-cpu: offcpu_starts full
	DropWakersFull           = DropCause(probeeDropCauseDROP_WAKERS_FULL) // --wakers: wake_joins full
	dropMax                  = DropCause(probeeDropCauseDROP_MAX)
)

// dropCause describes one cause.
type dropCause struct {
	partial bool // the event is counted, with a stack walked short or by frame pointers
	text    string
}

// dropCauses describes each cause, by DropCause (TestEnumTables checks
// that every cause has a description).
var dropCauses = [dropMax]dropCause{
	{false, "counts map full (raise --max-stacks)"},
	{false, "user stack map full (raise --max-stacks)"},
	{false, "user stack hash collision"},
	{false, "kernel stacks unreadable (those events are counted with their user stacks alone; Linux 5.10 gives system call tracepoints none)"},
	{false, "kernel stack hash collision"},
	{false, "process notice lost (ring buffer full)"},
	{true, "taken before the process's unwind tables were loaded (frame pointers used)"},
	{true, "cut at a pc outside every known mapping (JIT code, or a library loaded since), or in the heap or the stack (a return address misread from a frame that was none)"},
	{false, "counts map switched twice during one event (raise --interval)"},
	{false, "kernel stack map full (raise --max-stacks)"},
	{false, "stacks to finish in user space lost (ring buffer full; counted as partial stacks)"},
	{true, "cut where the unwind rules could not be followed (CFI probee does not evaluate, such as ld.so's lazy-binding trampoline; unreadable stack memory; or deeper than the walk goes)"},
	{false, "off-CPU waits without room for their thread (more threads off CPU at once than --off-cpu holds)"},
	{false, "wake-ups without room for their waker's stacks (more wake-ups between two drains than --wakers holds; those waits keep their own stacks)"},
}

// String describes d: what was lost or, for a partial cause, how the
// stacks came out incomplete.
func (d DropCause) String() string {
	if d >= 0 && d < dropMax {
		return dropCauses[d].text
	}
	return fmt.Sprintf("drop cause %d", int(d))
}

// Partial reports whether d loses no event: the event is counted with a
// user stack walked by frame pointers (no unwind table yet) or cut short.
// Every other cause loses events or stacks (DropDeferLost's stacks are
// counted as partial, but the stacks themselves are gone).
func (d DropCause) Partial() bool { return d >= 0 && d < dropMax && dropCauses[d].partial }

// Count is one aggregated stack: how often probe fired in tgid with this
// user and kernel stack (in a measure mode: its calls, their total and
// their maximum). Pcs are leaf first, as captured.
type Count struct {
	Probe         uint32
	TGID          int
	Comm          string
	User          Stack // empty when lost (see UserLost)
	UserTruncated bool  // the walk was cut: a partial stack
	UserExiting   bool  // cut in an exiting process, whose memory was being unmapped
	UserInExec    bool  // taken inside execve: no user stack (not the new program's yet)
	UserLost      bool
	Kernel        Stack
	Count         uint64
	Total, Max    uint64 // measure modes: nanoseconds or the argument's sum and maximum
}

// Snapshot is everything drained from the kernel.
type Snapshot struct {
	Counts []Count
	// Order is Counts' indices by the path of their user stacks (root
	// first, depth first: PathOrder): consecutive counts there share most
	// of their frames. nil: Counts' own order.
	Order  []int32
	Hits   []uint64 // events per probe id (before any loss)
	Drops  map[DropCause]uint64
	Probes []ProbeMeasure // measure modes: per probe id
}

// Drain reads the aggregation maps for probes 0..nprobes-1, adding every
// count moved to Go by earlier DrainInterval calls. Call it after Detach,
// as the session's last read: the accumulator is emptied, and the counts
// live on in the Snapshot alone (a system-wide run's caller can then free
// each count's stacks once it has symbolized them).
func (s *Session) Drain(nprobes int) (*Snapshot, error) {
	snap := &Snapshot{Drops: map[DropCause]uint64{}}
	var err error
	if snap.Hits, err = s.perCPUSums(s.objs.Hits, nprobes); err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	drops, err := s.perCPUSums(s.objs.Drops, int(dropMax))
	if err != nil {
		return nil, fmt.Errorf("read drops: %w", err)
	}
	for i, v := range drops {
		if v > 0 {
			snap.Drops[DropCause(i)] = v
		}
	}
	if snap.Counts, snap.Order, err = s.readCounts(); err != nil {
		return nil, err
	}
	if snap.Probes, err = s.probeMeasures(nprobes); err != nil {
		return nil, err
	}
	return snap, nil
}

func (s *Session) perCPUSums(m *ebpf.Map, n int) ([]uint64, error) {
	out := make([]uint64, n)
	var per []uint64
	for i := 0; i < n; i++ {
		if err := m.Lookup(uint32(i), &per); err != nil {
			return nil, err
		}
		for _, v := range per {
			out[i] += v
		}
	}
	return out, nil
}

// readCounts drains both counts maps into the accumulator and returns all
// of it, sorted, and its order by path (PathOrder), leaving the
// accumulator empty.
func (s *Session) readCounts() ([]Count, []int32, error) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	defer func() { s.acc = newAccumulator() }()
	for i, m := range []*ebpf.Map{s.objs.Counts0, s.objs.Counts1} {
		// Programs may still be finishing after Detach.
		s.gate.waitIdle(uint32(i), drainWait)
		if _, err := s.drainCounts(m); err != nil {
			return nil, nil, err
		}
		if _, err := s.drainMeasures(s.measuresMap(uint32(i))); err != nil {
			return nil, nil, err
		}
	}
	s.closeOpenWaits()
	if err := s.takeStacks(); err != nil {
		return nil, nil, err
	}
	s.acc.resolve()
	rank := s.acc.pcs.Preorder() // before Freeze lets go of the child lists
	// The last read: the stacks are read from now on, the hashes unused.
	s.acc.pcs.Freeze()
	s.acc.ustacks, s.acc.kstacks = nil, nil
	counts := s.accCounts()
	return counts, PathOrder(counts, s.acc.pcs, rank), nil
}

// Drained is a Snapshot of what periodic drains (DrainInterval) have moved
// to Go so far, with the kernel's hit and drop counters; no map is
// drained, so it is safe while probes are attached. Counts only grow from
// one call to the next (package push sends the differences).
func (s *Session) Drained(nprobes int) (*Snapshot, error) {
	snap := &Snapshot{Drops: map[DropCause]uint64{}}
	var err error
	if snap.Hits, err = s.perCPUSums(s.objs.Hits, nprobes); err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	s.dmu.Lock()
	defer s.dmu.Unlock()
	snap.Counts = s.accCounts()
	return snap, nil
}

// accCounts are the counts in Go, sorted. Call with dmu held.
func (s *Session) accCounts() []Count {
	out := make([]Count, 0, len(s.acc.counts)+len(s.acc.measures))
	for k, n := range s.acc.counts {
		out = append(out, s.acc.countOf(k, measureVal{calls: n}))
	}
	for k, m := range s.acc.measures {
		out = append(out, s.acc.countOf(k, m))
	}
	// Not a stable sort: the input comes in map order anyway, and keys that
	// differ only in what compareCounts does not compare are rare.
	slices.SortFunc(out, func(a, b Count) int { return compareCounts(&a, &b) })
	return out
}

// countOf is the Count of key k with its stacks.
func (a *accumulator) countOf(k countKey, m measureVal) Count {
	c := Count{Probe: k.probe, TGID: int(k.tgid), Comm: a.comms[k.comm], Count: m.calls,
		Total: m.total, Max: m.max, Kernel: Stack{a.pcs, k.kernel}}
	if k.flags&stackLost != 0 {
		c.UserLost = true
		return c
	}
	c.User, c.UserTruncated = Stack{a.pcs, k.user}, k.flags&stackTruncated != 0
	c.UserExiting, c.UserInExec = k.flags&stackExiting != 0, k.flags&stackInExec != 0
	return c
}

func commString(c [16]int8) string {
	b := make([]byte, 0, 16)
	for _, ch := range c {
		if ch == 0 {
			break
		}
		b = append(b, byte(ch))
	}
	return string(b)
}

// compareCounts orders counts by probe, process, count (highest first),
// comm and stacks (compareStacks: the order stacks were first seen in).
func compareCounts(a, b *Count) int {
	if c := cmp.Or(cmp.Compare(a.Probe, b.Probe), cmp.Compare(a.TGID, b.TGID), cmp.Compare(b.Count, a.Count),
		strings.Compare(a.Comm, b.Comm)); c != 0 {
		return c
	}
	if c := compareStacks(a.User, b.User); c != 0 {
		return c
	}
	return compareStacks(a.Kernel, b.Kernel)
}
