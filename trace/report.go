package trace

import (
	"strings"

	"github.com/probee/probee/bpf"
)

// Report is what a run counted and what it lost: Run hands it to
// Config.Status once the counts are drained, before the outputs are
// written, and returns it in the Result.
type Report struct {
	Probes []ProbeHits // by probe id; with --sample, its samples last
	Losses []Loss      // the kernel's causes in bpf.DropCause order, then user space's
}

// ProbeHits is one probe's events, before any loss.
type ProbeHits struct {
	Label  string
	Hits   uint64
	Sample bool // --sample's samples, not a probe's hits
}

// LossKind says what became of the events, stacks or records a Loss
// counts: whether they were lost, or kept with an incomplete stack.
type LossKind int

const (
	// Dropped events or stacks are gone from the profile (a warning).
	Dropped LossKind = iota
	// Lost mapping records leave the frames of their processes
	// unsymbolized (module+0xOFF): counted with the drops.
	Lost
	// Partial stacks are counted, but their user stack was walked with
	// frame pointers or cut short: no event is lost.
	Partial
	// Finished stacks were handed over unfinished by the kernel and
	// finished in user space: nothing is lost (those cut short are
	// Partial as well).
	Finished
)

// Loss counts the events, stacks or records of one cause.
type Loss struct {
	Kind  LossKind
	Count uint64
	// Cause says what and why; for Partial stacks, how they were taken;
	// for Finished ones, which.
	Cause string
}

// Dropped is how many events, stacks or records the run lost (Dropped
// and Lost): 0 is a run without drops.
func (r *Report) Dropped() uint64 {
	var n uint64
	for _, l := range r.Losses {
		if l.Kind == Dropped || l.Kind == Lost {
			n += l.Count
		}
	}
	return n
}

// partialCauses are the kernel's drop causes that lose no event: the
// event is counted with a user stack walked with frame pointers (no
// unwind table yet) or cut short. Every other cause loses events or
// stacks (bpf.DropDeferLost's stacks count as partial, but the stacks
// themselves are gone).
var partialCauses = map[bpf.DropCause]bool{
	bpf.DropNoTables:  true,
	bpf.DropUnknownPC: true,
	bpf.DropCut:       true,
}

// partialPrefix starts the name of a partial cause (bpf.DropCause's
// String); the status line says it once, before the count.
const partialPrefix = "partial stacks: "

// kernelLoss is the Loss of n events of the kernel's cause.
func kernelLoss(cause bpf.DropCause, n uint64) Loss {
	if partialCauses[cause] {
		return Loss{Kind: Partial, Count: n, Cause: strings.TrimPrefix(cause.String(), partialPrefix)}
	}
	return Loss{Kind: Dropped, Count: n, Cause: cause.String()}
}
