package trace

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// tightGC is the collector's target (GOGC) once probes are attached: the
// heap may grow by a quarter of what the last collection found live.
// What a run holds from then on (counts, stacks, symbols, the profile)
// mostly lives to its end, so collections are rare anyway, and each
// keeps the resident set near the live heap: with Go's default of 100, a
// run with 2M distinct stacks (tests/bench/13) peaked at twice its live
// heap. Loading and attaching, which make much short-lived garbage,
// keep the default.
const tightGC = 25

// releaseMemory hands the memory of what the finish no longer needs back
// to the system before the next step takes as much: the tree of pcs
// once the stacks are symbolized (144 MB for 2M distinct stacks), the
// counts once the samples are made (192 MB). The collector's own pace
// returns freed pages over minutes, and until then they count in the
// resident set: the 2M-stack finish peaked at 1036 MB where its live
// heap never passed 600 MB. Each call costs one collection (~0.2 s).
func releaseMemory() { debug.FreeOSMemory() }

// tightenGC sets tightGC unless GOGC is set in the environment.
func tightenGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(tightGC)
	}
}

// idleRelease: during a run, memory the heap freed and still holds is
// handed back at most every idleEvery once it passes idleFloor and an
// eighth of the heap in use. A long run's heap is steady, but its work
// comes in bursts (a drain symbolizes the stacks of the processes gone,
// reading their files' symbols and DWARF), and the collector's own pace
// returns the pages a burst freed over minutes: a 10-minute churn run's
// resident set swung by 25 MB around a steady live heap.
const (
	idleEvery = 10 * time.Second
	idleFloor = 8 << 20
)

var idle struct {
	sync.Mutex
	last    time.Time
	samples [2]metrics.Sample
}

// releaseIdle hands freed heap memory back to the system when there is
// enough of it (idleRelease); called after each drain.
func releaseIdle(now time.Time) {
	idle.Lock()
	defer idle.Unlock()
	if now.Sub(idle.last) < idleEvery {
		return
	}
	s := &idle.samples
	s[0].Name, s[1].Name = "/memory/classes/heap/free:bytes", "/memory/classes/heap/objects:bytes"
	metrics.Read(s[:])
	if !idleWorth(s[0].Value.Uint64(), s[1].Value.Uint64()) {
		return
	}
	idle.last = now
	debug.FreeOSMemory()
}

// idleWorth says whether free bytes of heap held beside inUse bytes of
// objects are worth a release (idleRelease).
func idleWorth(free, inUse uint64) bool { return free >= idleFloor && free >= inUse/8 }
