package trace

import (
	"fmt"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
)

// --off-cpu is a probe of its own, labelled offCPULabel, beside the
// others: its waits are counted under one probe id per state (after the
// probes and --sample's), each stack topped by its state's frame
// ("[sleep]", ...), weighed in nanoseconds (output.KindOffCPU).

// offCPULabel labels --off-cpu's waits.
const offCPULabel = "off-cpu"

// offCPUProbe is the first of --off-cpu's probe ids: after the probes
// and --sample's.
func (t *tracer) offCPUProbe() uint32 {
	if t.sampling() {
		return t.sampleProbe() + 1
	}
	return t.sampleProbe()
}

// offCPUOptions are the session's --off-cpu options.
func (t *tracer) offCPUOptions() bpf.OffCPU {
	return bpf.OffCPU{On: t.timingWaits(), Probe: t.offCPUProbe(), Wakers: t.cfg.Wakers,
		MinBlock: t.cfg.MinBlock, MaxBlock: t.cfg.MaxBlock}
}

// stateMarks are the frames of --off-cpu's states by probe id
// (stackFrames.marks); nil without --off-cpu.
func (t *tracer) stateMarks() map[uint32]string {
	if !t.timingWaits() {
		return nil
	}
	marks := map[uint32]string{}
	for i, name := range bpf.OffCPUStateNames {
		marks[t.offCPUProbe()+uint32(i)] = name
	}
	return marks
}

// attachOffCPU attaches --off-cpu's program.
func (t *tracer) attachOffCPU() error {
	if !t.timingWaits() {
		return nil
	}
	if err := t.sess.AttachOffCPU(); err != nil {
		return fmt.Errorf("--off-cpu: %w", err)
	}
	wakers := ""
	if t.cfg.Wakers {
		wakers = ", each with the stacks that woke it"
	}
	t.status.Infof("timing the waits off CPU%s%s", blockBounds(t.cfg.MinBlock, t.cfg.MaxBlock), wakers)
	return nil
}

// blockBounds describes --min-block and --max-block.
func blockBounds(lo, hi time.Duration) string {
	switch {
	case lo > 0 && hi > 0:
		return fmt.Sprintf(" (stacks of waits from %v to %v)", lo, hi)
	case lo > 0:
		return fmt.Sprintf(" (stacks of waits of %v or more)", lo)
	case hi > 0:
		return fmt.Sprintf(" (stacks of waits up to %v)", hi)
	}
	return ""
}

// reportOffCPU prints the waits and their time per state, every wait
// included (the bounds filter only the stacks).
func (t *tracer) reportOffCPU(snap *bpf.Snapshot) {
	if !t.timingWaits() || len(snap.Probes) < int(t.offCPUProbe())+bpf.OffCPUStates {
		return
	}
	var waits, total uint64
	var parts string
	for i, name := range bpf.OffCPUStateNames {
		pm := snap.Probes[int(t.offCPUProbe())+i]
		waits, total = waits+pm.Calls, total+pm.Total
		if pm.Calls > 0 {
			parts += fmt.Sprintf(", %s %v", name, roundTime(pm.Total))
		}
	}
	t.status.Infof("time off CPU: %v in %s%s", roundTime(total), plural(int(waits), "wait"), parts)
}

// roundTime is ns as a duration to the millisecond, or to the
// microsecond below one.
func roundTime(ns uint64) time.Duration {
	d := time.Duration(ns)
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// offCPUMeasure is --off-cpu's measure in the profile.
func (t *tracer) offCPUMeasure(prof *output.Profile) {
	if t.cfg.OffCPU {
		t.measureProbe(prof, offCPULabel, output.Measure{Kind: output.KindOffCPU})
	}
}
