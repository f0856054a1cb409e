package bpf

import (
	"time"

	"github.com/probee/probee/internal/prefixtree"
)

// The accumulator keys counts by their stacks' nodes in one prefix tree
// of pcs (accumulator.pcs), not by the content hashes the kernel keys
// them by: a count's key is 24 bytes where it was 40, and the hashes are
// needed only to resolve the counts of the next drains. A count drained
// from the kernel names stacks that the take right after it moves to Go
// (the drain takes counts, then stacks): either stored since the last
// take, or moved by it (an event re-stores the stack it finds missing).
// So counts wait in pending until the take, then find their stacks by
// hash among those of the last takes (ustacks, kstacks); older hashes
// are dropped (pruneHashes), so those maps hold a few seconds of stacks,
// not every stack of the run (2M stacks: 108 MB).

// rawKey is a count's key as the kernel gives it (probeeCountKey without
// padding).
type rawKey struct {
	probe, tgid uint32
	comm        [16]int8
	ustack      uint64 // content hash of the user stack, 0: lost
	kstack      uint64 // content hash of the kernel stack, 0: none
}

func rawKeyOf(key probeeCountKey) rawKey {
	return rawKey{probe: key.Probe, tgid: key.Tgid, comm: key.Comm, ustack: key.Ustack, kstack: key.Kstack}
}

// countKey is an aggregated count's key.
type countKey struct {
	probe, tgid  uint32
	comm         uint32          // index in accumulator.comms
	user, kernel prefixtree.Node // in accumulator.pcs; Root: none
	flags        uint32          // the user stack's (stackTruncated, ...; stackLost)
}

// pendingCount is a count drained from the kernel whose stacks are not
// resolved yet.
type pendingCount struct {
	key     rawKey
	val     measureVal
	measure bool // a measure (measure modes), not a count
}

type userStack struct {
	node  prefixtree.Node // in accumulator.pcs
	flags uint32          // the kernel's user_stack.flags (stackTruncated, ...)
	take  uint32          // accumulator.take when it was last moved from the kernel
	at    int64           // and the time then (unix seconds)
}

type kernelStack struct {
	node prefixtree.Node // in accumulator.pcs
	take uint32          // as userStack's
	at   int64
}

// User stack flags (enum stack_flag in probee.h), and stackLost: the
// stack's hash named none.
const (
	stackTruncated = uint32(probeeStackFlagSTACK_TRUNCATED)
	stackExiting   = uint32(probeeStackFlagSTACK_EXITING)
	stackInExec    = uint32(probeeStackFlagSTACK_IN_EXEC)
	stackLost      = 1 << 16
)

// accumulator holds what has been drained from the kernel so far.
type accumulator struct {
	counts   map[countKey]uint64
	measures map[countKey]measureVal // measure modes (latency.go)
	pending  []pendingCount          // drained, stacks not resolved yet (resolve)
	ustacks  map[uint64]userStack    // by hash: the stacks of recent takes
	kstacks  map[uint64]kernelStack
	pcs      *prefixtree.Tree[uint64] // every stack's pcs, root first (stacks.go)
	compact  int                      // pcs.Len() after its last compaction (fold.go)
	comms    []string                 // by countKey.comm
	commIDs  map[[16]int8]uint32
	take     uint32            // stack takes so far (takeStacks)
	takeAt   int64             // the last take's time (unix seconds)
	pruned   time.Time         // the last pruneHashes
	procs    map[uint32]int    // processes with counts or measures here: their keys (fold.go)
	gone     map[uint32]goneAt // processes found gone whose counts are still here (fold.go)
	pinned   map[uint64]bool   // hashes of stacks open off-CPU waits name: kept (offcpu.go)
}

func newAccumulator() accumulator {
	// The empty comm is comms[0]: a zero countKey is a valid key.
	return accumulator{counts: map[countKey]uint64{}, measures: map[countKey]measureVal{},
		ustacks: map[uint64]userStack{}, kstacks: map[uint64]kernelStack{}, pcs: prefixtree.New[uint64](),
		comms: []string{""}, commIDs: map[[16]int8]uint32{{}: 0}, procs: map[uint32]int{}, gone: map[uint32]goneAt{},
		pinned: map[uint64]bool{}}
}

// addCount adds n events to count k.
func (a *accumulator) addCount(k countKey, n uint64) {
	v, ok := a.counts[k]
	if !ok {
		a.procs[k.tgid]++
	}
	a.counts[k] = v + n
}

// addMeasure adds m to measure k.
func (a *accumulator) addMeasure(k countKey, m measureVal) {
	v, ok := a.measures[k]
	if !ok {
		a.procs[k.tgid]++
	}
	a.measures[k] = measureVal{v.calls + m.calls, v.total + m.total, max(v.max, m.max)}
}

// resolve adds the pending counts (measures: measure set) by their
// stacks' nodes. Call after the take that followed their drain.
func (a *accumulator) resolve() {
	for _, p := range a.pending {
		k := a.keyOf(p.key)
		if p.measure {
			a.addMeasure(k, p.val)
		} else {
			a.addCount(k, p.val.calls)
		}
	}
	a.pending = a.pending[:0] // no pointers in it: nothing to clear
}

// keyOf is raw's key by nodes.
func (a *accumulator) keyOf(raw rawKey) countKey {
	k := countKey{probe: raw.probe, tgid: raw.tgid, comm: a.commID(raw.comm), flags: stackLost}
	if u, ok := a.ustacks[raw.ustack]; ok && raw.ustack != 0 {
		k.user, k.flags = u.node, u.flags
	}
	if ks, ok := a.kstacks[raw.kstack]; ok && raw.kstack != 0 {
		k.kernel = ks.node
	}
	return k
}

func (a *accumulator) commID(c [16]int8) uint32 {
	id, ok := a.commIDs[c]
	if !ok {
		id = uint32(len(a.comms))
		a.comms = append(a.comms, commString(c))
		a.commIDs[c] = id
	}
	return id
}

// keepHashes is how long a stack's hash is kept after the last take that
// moved it, beside the last two takes: a stack finished in user space
// (deferred.go) names its kernel stack by hash, a little after its event.
const keepHashes = 10 * time.Second

// pruneDue reports whether pruneHashes prunes at now: once a second, as
// drains come faster in a burst of new stacks.
func (a *accumulator) pruneDue(now time.Time) bool { return now.Sub(a.pruned) >= time.Second }

// pruneHashes drops the hashes of stacks moved by neither of the last
// two takes nor within keepHashes of now, but the pinned ones.
func (a *accumulator) pruneHashes(now time.Time) {
	if !a.pruneDue(now) {
		return
	}
	a.pruned = now
	old := func(take uint32, at int64) bool {
		return take+2 <= a.take && now.Unix()-at > int64(keepHashes/time.Second)
	}
	for h, u := range a.ustacks {
		if old(u.take, u.at) && !a.pinned[h] {
			delete(a.ustacks, h)
		}
	}
	for h, k := range a.kstacks {
		if old(k.take, k.at) && !a.pinned[h] {
			delete(a.kstacks, h)
		}
	}
}
