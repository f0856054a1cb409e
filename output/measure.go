package output

import "fmt"

// Measure is what one probe's samples count (Sample.Count) and weigh
// (Sample.Value). A profile has one for all its probes (Profile.Measure)
// and may give some probes another (Profile.Measures): --sample or
// --off-cpu beside function probes.
type Measure struct {
	Kind        string // KindHits, KindSamples, KindLatency, KindWeight, KindOffCPU or KindWall
	PeriodNanos int64  // sampling period, for KindSamples and KindWall
	ValueType   string // KindWeight: what Value sums, e.g. "arg0"
	ValueUnit   string // KindWeight: its unit, e.g. "bytes"
}

// unit is the word for what a sample weighs.
func (m Measure) unit() string {
	switch m.Kind {
	case KindSamples:
		return "samples"
	case KindLatency, KindOffCPU, KindWall:
		return "ns"
	case KindWeight:
		return m.ValueUnit
	}
	return "hits"
}

// weighted reports whether samples weigh their Value, not their Count.
func (m Measure) weighted() bool { return m.Kind == KindWeight || m.timed() }

// callsWord names what Count counts in a weighted measure.
func (m Measure) callsWord() string {
	switch m.Kind {
	case KindOffCPU:
		return "blocks"
	case KindWall:
		return "samples and blocks"
	}
	return "calls"
}

// timed reports whether Value is nanoseconds.
func (m Measure) timed() bool {
	return m.Kind == KindLatency || m.Kind == KindOffCPU || m.Kind == KindWall
}

// heading names one probe in a title: "probe LABEL" for probes, the bare
// label for sampling, "time in LABEL" for latency, "ARG of LABEL" for
// weights, "time off CPU" for --off-cpu.
func (m Measure) heading(label string) string {
	switch m.Kind {
	case KindSamples:
		return label
	case KindLatency:
		return "time in " + label
	case KindWeight:
		return m.ValueType + " of " + label
	case KindOffCPU:
		return "time off CPU"
	case KindWall:
		return "wall-clock time"
	}
	return "probe " + label
}

// amount renders a total with its unit, and the CPU time for samples and
// the time in seconds for latency and off-CPU time.
func (m Measure) amount(n uint64) string {
	s := thousands(n) + " " + m.unit()
	switch {
	case m.Kind == KindSamples && m.PeriodNanos > 0:
		s += fmt.Sprintf(" (≈ %.3g s CPU)", float64(n)*float64(m.PeriodNanos)/1e9)
	case m.timed():
		s += " (" + valueText(n, KindLatency, "") + ")"
	}
	return s
}

// MeasureOf is the measure of the probe labelled label.
func (p *Profile) MeasureOf(label string) Measure {
	if m, ok := p.Measures[label]; ok {
		return m
	}
	return p.Measure
}

// common is the measure of combined outputs: the one every probe of p
// has, or where probes are measured otherwise a weight in "weight" (their
// samples summed as they are).
func (p *Profile) common() Measure {
	for _, l := range ProbeLabels(p) {
		if p.MeasureOf(l) != p.Measure {
			return Measure{Kind: KindWeight, ValueUnit: "weight"}
		}
	}
	return p.Measure
}

// unit is the word for what a sample weighs in combined outputs.
func (p *Profile) unit() string { return p.common().unit() }

// Weight is what s weighs in stacks, flamegraphs and totals: its Value
// for KindLatency, KindWeight, KindOffCPU and KindWall, else its Count.
func (p *Profile) Weight(s *Sample) uint64 {
	m := p.Measure
	if len(p.Measures) > 0 {
		m = p.MeasureOf(s.Probe)
	}
	if m.weighted() {
		return s.Value
	}
	return s.Count
}

// offCPU reports whether s is a block off CPU in a KindWall profile: its
// kernel stack ends with the state frame ("[sleep]", ...), or holds it
// before its waker's frames (--wakers); a CPU sample's has no marker.
func offCPU(s *Sample) bool { return s.Kernel.hasMarker() }
