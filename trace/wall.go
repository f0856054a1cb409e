package trace

import "github.com/probee/probee/bpf"

// --wall is --sample and --off-cpu as one probe, labelled wallLabel:
// each thread's CPU samples, weighed by the sampling period, and its waits,
// in nanoseconds (output.KindWall), so that a thread's stacks add up to
// the time it was traced. cmd/probee turns on Sample and OffCPU with it;
// their probe ids are kept, their labels are "wall".

// wallLabel labels --wall's samples and waits.
const wallLabel = "wall"

// wallOr is label, or "wall" with --wall.
func (t *tracer) wallOr(label string) string {
	if t.cfg.Wall {
		return wallLabel
	}
	return label
}

// sampleProbe is the probe id of --sample's (and --wall's) CPU samples:
// after the probes.
func (t *tracer) sampleProbe() uint32 { return uint32(len(t.cfg.Probes)) }

// period is the sampling period in nanoseconds.
func (t *tracer) period() int64 { return int64(1e9 / t.cfg.Freq) }

// value is what c weighs beside its count: its total (measures), or with
// --wall for a CPU sample its samples' time.
func (t *tracer) value(c *bpf.Count) uint64 {
	if t.cfg.Wall && c.Probe == t.sampleProbe() {
		return c.Count * uint64(t.period())
	}
	return c.Total
}
