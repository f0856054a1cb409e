package trace

import (
	"os"
	"runtime/debug"
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
