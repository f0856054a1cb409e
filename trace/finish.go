package trace

import (
	"io"
	"maps"
	"slices"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
)

// finish detaches, drains the kernel maps, symbolizes, reports hits and
// drops and writes the outputs. It runs on every way out of wait.
func (t *tracer) finish(stdout io.Writer) (*Result, error) {
	defer stopCPUProfile()
	writeHeapProfile("")
	if err := t.sess.Detach(); err != nil {
		t.status.Warnf("detach: %v", err)
	}
	t.procs.Stop() // no stacks are taken any more
	t.stopEv()     // handle queued process notices before symbolizing
	t.stopEv = nil
	t.stopDef()
	t.stopDef = nil
	t.mmaps.Flush()
	t.deferred = t.procs.FinishDeferred() // needs the mapping records
	snap, err := t.sess.Drain(len(t.labels()))
	if err != nil {
		t.finishPush(nil) // what earlier intervals queued still goes out
		return nil, err
	}
	t.sym.SetInline(!t.cfg.NoInline)
	prefetch(t.sym, snap.Counts, snap.Order)
	stacked := t.stackedCalls(snap)
	prof := t.profile(snap)
	snap.Counts = nil // the profile holds what they said (2M counts: 192 MB)
	releaseMemory()
	writeHeapProfile(".profile")
	rep := t.report(snap)
	if prof.Kind == output.KindLatency || prof.Kind == output.KindWeight {
		t.reportMeasures(snap, stacked, prof.Kind, prof.ValueUnit)
	}
	t.reportOffCPU(snap)
	err = output.Write(prof, t.dests, output.Options{Stdout: stdout, Lines: t.cfg.Lines})
	// After the local outputs: a slow backend cannot hold them up.
	if perr := t.finishPush(prof); err == nil {
		err = perr
	}
	return &Result{Profile: prof, Report: rep}, err
}

// profile symbolizes snap's counts into a Profile, after the samples of
// the processes merged during the run (fold.go). It symbolizes every
// count's stacks first, and drops them (stacks): at the end of a run the
// counts are the last reference to the tree of pcs (144 MB for 2M
// distinct stacks), which is handed back before the samples are made.
// The profile's tree of frames is frozen once made (read from then on).
func (t *tracer) profile(snap *bpf.Snapshot) *output.Profile {
	prof := &output.Profile{Measure: output.Measure{Kind: output.KindHits}, Drops: map[string]uint64{}}
	t.measureProfile(prof)
	if t.cfg.Wall {
		t.measureProbe(prof, wallLabel, output.Measure{Kind: output.KindWall, PeriodNanos: t.period()})
	}
	if t.cfg.Sample {
		t.measureProbe(prof, sampleLabel, output.Measure{Kind: output.KindSamples, PeriodNanos: t.period()})
	}
	t.offCPUMeasure(prof)
	t.loadSpill()
	labels := t.labels()
	prof.Probes = t.probeLabels()
	for cause, n := range snap.Drops {
		prof.Drops[dropLabel(cause)] = n
	}
	if n := t.mmaps.Lost(); n > 0 {
		prof.Drops[mmapLost] = n
	}
	if t.folded != nil && t.folded.over > 0 {
		prof.Drops[mergedOver] = t.folded.over
	}
	sf := &stackFrames{sym: t.sym, marks: t.stateMarks()}
	var folded []output.Sample
	if t.folded != nil {
		sf, folded = &t.folded.sf, t.folded.merged.Samples()
		// The processes counted to the end keep their pids: their bare
		// addresses stay (a frame converted while merging may not serve).
		sf.pidless, sf.byRef = false, nil
	}
	stacks := sf.stacks(snap.Counts, snap.Order)
	releaseMemory() // the tree of pcs, before the samples take its place
	prof.Samples = make([]output.Sample, 0, len(folded)+len(snap.Counts))
	prof.Samples = append(prof.Samples, folded...)
	for i := range snap.Counts {
		c := &snap.Counts[i]
		s := t.sampleOf(labels, c, stacks[i])
		prof.Samples = append(prof.Samples, s)
		if t.wallAlso(c.Probe) {
			prof.Samples = append(prof.Samples, t.wallSample(s, c))
		}
	}
	sf.fs.Freeze()
	return prof
}

// sampleLabel is the probe label of --sample stacks.
const sampleLabel = "sample"

// labels are the probe labels by probe id: the specs as given, then
// "sample" for the CPU samples, then "off-cpu" for each state of the
// waits ("wall" for either when --wall takes them alone: wall.go).
func (t *tracer) labels() []string {
	var out []string
	for _, p := range t.cfg.Probes {
		out = append(out, p.Text)
	}
	if t.sampling() {
		out = append(out, wallOr(sampleLabel, t.cfg.Sample))
	}
	if t.timingWaits() {
		for range bpf.OffCPUStates {
			out = append(out, wallOr(offCPULabel, t.cfg.OffCPU))
		}
	}
	return out
}

// event is what the hits of probe id, labelled label, count.
func (t *tracer) event(id int, label string) string {
	switch {
	case id < len(t.cfg.Probes):
		return "hit"
	case label == wallLabel:
		return "event" // samples and waits
	case id >= int(t.offCPUProbe()):
		return "switch-out"
	}
	return "sample"
}

const mmapLost = "mapping records lost (frames of those processes may show as module+0xOFF)"

// report hands the hits per probe, every drop (an event or part of a
// stack lost) and the partial stacks (counted, but walked with frame
// pointers or cut short) to the Reporter, and says what the drains, the
// merges and the unwind tables did.
func (t *tracer) report(snap *bpf.Snapshot) *Report {
	rep := &Report{}
	for id, label := range t.labels() {
		if n := len(rep.Probes); n > 0 && rep.Probes[n-1].Label == label && id > len(t.cfg.Probes) {
			rep.Probes[n-1].Hits += snap.Hits[id] // another state of --off-cpu's waits, or --wall's
			continue
		}
		rep.Probes = append(rep.Probes, ProbeHits{Label: label, Hits: snap.Hits[id], Event: t.event(id, label)})
	}
	rep.Probes = t.wallHits(rep.Probes, snap.Hits)
	for _, cause := range sortedCauses(snap.Drops) {
		rep.Losses = append(rep.Losses, kernelLoss(cause, snap.Drops[cause]))
	}
	rep.Losses = append(rep.Losses, t.deferredLosses()...)
	if n := t.mmaps.Lost(); n > 0 {
		rep.Losses = append(rep.Losses, Loss{Kind: Lost, Count: n, Cause: mmapLost})
	}
	if t.folded != nil && t.folded.over > 0 {
		rep.Losses = append(rep.Losses, Loss{Kind: Dropped, Count: t.folded.over, Cause: mergedOver})
	}
	t.status.Report(rep)
	t.reportDrains()
	if t.folded != nil && t.folded.procs > 0 {
		t.status.Debugf("merged the stacks of %d processes gone during the run", t.folded.procs)
	}
	t.reportTables()
	return rep
}

// deferredLosses are how many stacks the kernel handed over unfinished
// were finished in user space, those of them cut short (partial), and
// those dropped.
func (t *tracer) deferredLosses() []Loss {
	st := t.deferred
	var out []Loss
	if n := st.Finished + st.Cut; n > 0 {
		out = append(out, Loss{Kind: Finished, Count: n, Cause: "taken before their binary's unwind table was loaded"})
	}
	if st.Cut > 0 {
		out = append(out, Loss{Kind: Partial, Count: st.Cut, Cause: "finished in user space but cut short (past the stack copy, or through code without unwind information)"})
	}
	if st.Dropped > 0 {
		out = append(out, Loss{Kind: Dropped, Count: st.Dropped, Cause: "stacks to finish in user space (too many waiting)"})
	}
	return out
}

func sortedCauses(m map[bpf.DropCause]uint64) []bpf.DropCause {
	causes := slices.Collect(maps.Keys(m))
	slices.Sort(causes)
	return causes
}

// reportTables prints the BPF map memory of the unwind tables, and the
// largest binary's share.
func (t *tracer) reportTables() {
	if !t.dwarfOn() {
		return
	}
	ts := t.sess.TableStats()
	largest, size := "", 0
	for path, n := range ts.ByBinary {
		if n > size || n == size && path < largest {
			largest, size = path, n
		}
	}
	t.status.Infof("unwind tables: %d binaries, %d bytes of BPF map data (%d shared rules)",
		ts.Tables, ts.Bytes, ts.Rules)
	if largest != "" {
		t.status.Infof("largest unwind table: %s, %d bytes", largest, size)
	}
	t.reportTableSources()
}
