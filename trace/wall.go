package trace

import (
	"slices"

	"github.com/probee/probee/bpf"
)

// --wall is --sample's CPU samples and --off-cpu's waits as one probe,
// labelled wallLabel: each thread's CPU samples, weighed by the sampling
// period, and its waits, in nanoseconds (output.KindWall), so that a
// thread's stacks add up to the time it was traced. The session takes
// samples and times waits when their own flag or --wall asks (sampling,
// timingWaits), under the same probe ids either way. Given alone, --wall
// labels those ids "wall"; beside --sample or --off-cpu, their counts
// are that probe's, and each makes a sample of wall's too (wallAlso).

// wallLabel labels --wall's samples and waits.
const wallLabel = "wall"

// sampling reports whether the run takes CPU samples: --sample or --wall.
func (t *tracer) sampling() bool { return t.cfg.Sample || t.cfg.Wall }

// timingWaits reports whether the run times waits: --off-cpu or --wall.
func (t *tracer) timingWaits() bool { return t.cfg.OffCPU || t.cfg.Wall }

// wallOr is label when its own flag was given (own), else wall's.
func wallOr(label string, own bool) string {
	if own {
		return label
	}
	return wallLabel
}

// wallAlso reports whether the counts of probe id are --wall's too: the
// samples or waits of --sample or --off-cpu given beside it.
func (t *tracer) wallAlso(id uint32) bool {
	switch {
	case !t.cfg.Wall || int(id) < len(t.cfg.Probes):
		return false
	case t.sampling() && id == t.sampleProbe():
		return t.cfg.Sample
	}
	return t.cfg.OffCPU
}

// probeLabels are the labels of the profile's probes: labels, and wall's
// where it labels no probe id of its own (wallAlso).
func (t *tracer) probeLabels() []string {
	out := t.labels()
	if t.cfg.Wall && !slices.Contains(out, wallLabel) {
		out = append(out, wallLabel)
	}
	return out
}

// wallHits adds to probes (the report's) the events that wall counts
// besides its own ids' (wallAlso).
func (t *tracer) wallHits(probes []ProbeHits, hits []uint64) []ProbeHits {
	if !t.cfg.Wall || !t.cfg.Sample && !t.cfg.OffCPU {
		return probes
	}
	var n uint64
	for id := range hits {
		if t.wallAlso(uint32(id)) {
			n += hits[id]
		}
	}
	for i := range probes {
		if probes[i].Label == wallLabel {
			probes[i].Hits += n
			return probes
		}
	}
	return append(probes, ProbeHits{Label: wallLabel, Hits: n, Event: "event"})
}

// sampleProbe is the probe id of the CPU samples: after the probes.
func (t *tracer) sampleProbe() uint32 { return uint32(len(t.cfg.Probes)) }

// period is the sampling period in nanoseconds.
func (t *tracer) period() int64 { return int64(1e9 / t.cfg.Freq) }

// value is what c weighs beside its count: its total (measures), or for
// a CPU sample labelled wall its samples' time.
func (t *tracer) value(c *bpf.Count) uint64 {
	if t.cfg.Wall && !t.cfg.Sample && c.Probe == t.sampleProbe() {
		return t.wallValue(c)
	}
	return c.Total
}

// wallValue is what c weighs in wall: a CPU sample the period each, a
// wait its nanoseconds.
func (t *tracer) wallValue(c *bpf.Count) uint64 {
	if t.sampling() && c.Probe == t.sampleProbe() {
		return c.Count * uint64(t.period())
	}
	return c.Total
}
