package trace

import (
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
	Label string
	Hits  uint64
	Event string // what Hits counts: "hit" (a probe; also ""), "sample" (--sample), "switch-out" (--off-cpu), "event" (--wall)
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

// kernelLoss is the Loss of n events of the kernel's cause: partial
// (bpf.DropCause.Partial: counted, with an incomplete stack) or dropped.
func kernelLoss(cause bpf.DropCause, n uint64) Loss {
	if cause.Partial() {
		return Loss{Kind: Partial, Count: n, Cause: cause.String()}
	}
	return Loss{Kind: Dropped, Count: n, Cause: cause.String()}
}

// dropLabel names the kernel's cause among a profile's drops (the
// flamegraph's subtitle): a partial cause says so first.
func dropLabel(cause bpf.DropCause) string {
	if cause.Partial() {
		return "partial stacks: " + cause.String()
	}
	return cause.String()
}
