package trace

import (
	"os"
	"strconv"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/symbolize"
)

// foldState is what processes gone during the run counted, symbolized
// and merged without their pids (output.Merged), so that a long run on a
// machine starting processes all the time holds the processes that run,
// not every one that ever hit a probe. Its frames are the final
// profile's (one stackFrames). On unless PROBEE_MERGE_GONE=0 or --push
// (trace.go).
type foldState struct {
	sf     stackFrames
	merged output.Merged
	calls  map[uint32]uint64 // counts merged, per probe id (reportMeasures)
	procs  int               // processes merged
	over   uint64            // counts of stacks left out past merged.Max
	evict  uint64            // the symbolizer's Evictions when sf.byRef began

	// spill holds the merged samples past spillAt on disk (nil until
	// then); spillNext is the number of merged samples that spills next
	// (raised after a failed spill); spillWarned: one warning.
	spill       *output.Spill
	spillEvery  int // spillAt, or PROBEE_SPILL_AT
	spillNext   int
	spillWarned bool
}

// spillAt is how many merged samples a run holds in memory before they
// go to the spill file (output.Spill) and the frames and stacks interned
// for them are let go: ~400 bytes each (BenchmarkSpillHeld: ~40 once
// spilled), so a run's memory varies by ~6 MB with them, not by the
// ~60 MB that 10 minutes of a churning machine's new stacks took.
// PROBEE_SPILL_AT (hidden, for tests) sets another.
const spillAt = 16384

func spillAtEnv() int {
	if n, err := strconv.Atoi(os.Getenv("PROBEE_SPILL_AT")); err == nil && n > 0 {
		return n
	}
	return spillAt
}

// mergedPerMaxStack is how many distinct merged samples each of
// --max-stacks' entries allows: 262144 by default, ~100 MB.
const mergedPerMaxStack = 4

// mergedOver is the drop cause of the counts past foldState.merged.Max.
const mergedOver = "stacks of exited processes past 4 x --max-stacks distinct ones (raise --max-stacks)"

func newFoldState(sym *symbolize.Symbolizer, maxStacks int) *foldState {
	every := spillAtEnv()
	return &foldState{sf: stackFrames{sym: sym, pidless: true}, calls: map[uint32]uint64{},
		merged: output.Merged{Max: mergedPerMaxStack * maxStacks}, spillEvery: every, spillNext: every}
}

// foldGone hands the counts of processes gone for a while over from the
// session (bpf.Session.TakeGone), symbolizes and merges them, and forgets
// those processes. Not with --push, whose deltas need every count to stay
// in the session. Called from the drain goroutine.
func (t *tracer) foldGone(now time.Time) {
	if t.folded == nil {
		return
	}
	counts := t.sess.TakeGone(t.procs.Alive, now)
	if len(counts) == 0 {
		return
	}
	f := t.folded
	if f.merged.Full() {
		// Symbolizing them would only grow the frame caches: a stack
		// already merged is rare once so many are.
		for i := range counts {
			f.over += counts[i].Count
		}
	} else {
		t.mergeCounts(counts)
		t.spillMerged()
	}
	gone := map[int]bool{}
	for i := range counts {
		gone[counts[i].TGID] = true
	}
	for pid := range gone {
		t.procs.Forget(pid)
	}
	f.procs += len(gone)
}

// mergeCounts symbolizes counts (object by object: no object's DWARF is
// kept for the next) and merges them.
func (t *tracer) mergeCounts(counts []bpf.Count) {
	t.sym.SetInline(!t.cfg.NoInline)
	f := t.folded
	if n := t.sym.Evictions(); n != f.evict {
		// Its keys would keep the frames of files no process maps.
		f.sf.byRef, f.evict = nil, n
	}
	prefetch(t.sym, counts, nil)
	labels := t.labels()
	for i := range counts {
		c := &counts[i]
		s := t.sample(&f.sf, labels, c)
		if !f.merged.Add(s) {
			f.over += c.Count
			continue
		}
		f.calls[c.Probe] += c.Count
		if t.wallAlso(c.Probe) && !f.merged.Add(t.wallSample(s, c)) {
			f.over += c.Count // wall's copy
		}
	}
}

// sample symbolizes c into a Sample, through sf.
func (t *tracer) sample(sf *stackFrames, labels []string, c *bpf.Count) output.Sample {
	return t.sampleOf(labels, c, [2]output.Stack{sf.user(c), sf.kernel(c)})
}

// sampleOf is the Sample of c with its stacks symbolized (user, kernel).
func (t *tracer) sampleOf(labels []string, c *bpf.Count, stacks [2]output.Stack) output.Sample {
	return output.Sample{
		Probe:  labels[c.Probe],
		PID:    c.TGID,
		Comm:   c.Comm,
		User:   stacks[0],
		Kernel: stacks[1],
		Count:  c.Count,
		Value:  t.value(c),
		// Zero without --group-by container.
		Container: t.procs.Container(c.TGID),
	}
}

// wallSample is s, the sample of c, as --wall's (wallAlso).
func (t *tracer) wallSample(s output.Sample, c *bpf.Count) output.Sample {
	s.Probe, s.Value = wallLabel, t.wallValue(c)
	return s
}

// spillMerged moves the merged samples to the spill file once there are
// spillNext of them, and starts the profile's frames afresh. A spill that
// fails (no temp directory, a full disk) keeps them in memory, says so
// once, and is tried again at twice as many.
func (t *tracer) spillMerged() {
	f := t.folded
	if f.merged.Len() < f.spillNext {
		return
	}
	err := f.spillNow()
	if err == nil {
		f.spillNext = f.spillEvery
		return
	}
	f.spillNext = 2 * f.merged.Len()
	if !f.spillWarned {
		f.spillWarned = true
		t.status.Warnf("%v: the stacks of exited processes stay in memory", err)
	}
}

func (f *foldState) spillNow() error {
	if f.spill == nil {
		sp, err := output.OpenSpill(os.TempDir())
		if err != nil {
			return err
		}
		f.spill = sp
	}
	if err := f.spill.Add(&f.merged); err != nil {
		return err
	}
	f.sf.fs, f.sf.byRef = output.Interner{}, nil
	return nil
}

// loadSpill brings the spilled samples back into merged, for the final
// profile, and closes the file.
func (t *tracer) loadSpill() {
	f := t.folded
	if f == nil || f.spill == nil {
		return
	}
	over, err := f.spill.Load(&f.merged, &f.sf.fs)
	f.over += over
	if err != nil {
		t.status.Warnf("%v: some stacks of exited processes are missing", err)
	}
	t.status.Debugf("stacks of exited processes: %d distinct kept on disk (%d bytes)", f.spill.Len(), f.spill.Bytes())
	f.spill.Close()
	f.spill = nil
}
