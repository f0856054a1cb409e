package trace

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// withReturns adds to a probe's targets what sees their returns: with
// --latency every function gets its return probes; without it the
// return probes of Go functions are moved to their RET instructions
// (resolver.ReturnAttachPoints). Functions whose returns cannot be probed
// safely are dropped with a warning; none left is a usage error.
func (t *tracer) withReturns(p Probe, targets []resolver.AttachPoint) ([]resolver.AttachPoint, error) {
	if p.Spec.Kind == probespec.Tracepoint || (!t.cfg.Latency && !p.Spec.Ret) {
		return targets, nil
	}
	var out []resolver.AttachPoint
	var refused []error
	var byRET, byUret int // functions whose returns are probed each way
	for _, tg := range targets {
		tgs, err := t.returnsOf(p, tg)
		if err != nil {
			refused = append(refused, err)
			continue
		}
		out = append(out, tgs...)
		switch {
		case !t.cfg.Latency || p.Spec.Kind == probespec.Kprobe:
		case tgs[1].RetInsn:
			byRET++
		default:
			byUret++
		}
	}
	if len(out) == 0 && len(refused) > 0 {
		return nil, usagef("%s %s: %v", p.Flag, Quote(p.Text), refused[0])
	}
	t.warnRefused(p, refused)
	if byRET+byUret > 0 {
		t.status.Infof("%s: %s", p.Text, returnsText(byRET, byUret))
	}
	return out, nil
}

// returnsText says how the returns of the functions timed are probed:
// "returns probed at the RET instructions of 2 functions, with a
// uretprobe for 1".
func returnsText(byRET, byUret int) string {
	var parts []string
	if byRET > 0 {
		parts = append(parts, "at the RET instructions of "+plural(byRET, "function"))
	}
	if byUret > 0 {
		parts = append(parts, "with a uretprobe for "+plural(byUret, "function"))
	}
	return "returns probed " + strings.Join(parts, ", ")
}

// returnsOf is what probes tg and its returns (see withReturns): with
// --latency tg and its return probes (the first of them at a RET
// instruction, or a uretprobe), without it a Go function's RET
// instructions in its place.
func (t *tracer) returnsOf(p Probe, tg resolver.AttachPoint) ([]resolver.AttachPoint, error) {
	switch {
	case p.Spec.Kind == probespec.Kprobe && t.cfg.Latency:
		ret := tg
		ret.Ret = true
		return []resolver.AttachPoint{tg, ret}, nil
	case t.cfg.Latency:
		rets, err := t.res.ReturnAttachPoints(tg, tg.Unwinds)
		if err != nil {
			return nil, err
		}
		return append([]resolver.AttachPoint{tg}, rets...), nil
	case tg.Go:
		return t.res.ReturnAttachPoints(tg, false)
	}
	return []resolver.AttachPoint{tg}, nil
}

// warnRefused warns of the functions of p whose returns cannot be probed,
// the first ten by name.
func (t *tracer) warnRefused(p Probe, refused []error) {
	for i, err := range refused {
		if i == 10 {
			t.status.Warnf("%s: ... and %d more functions skipped", p.Text, len(refused)-10)
			return
		}
		t.status.Warnf("%s: skipped: %v", p.Text, err)
	}
}

// returnSide reports whether tg is the return side of a timed function:
// its probe ends the call (bpf's return programs).
func (t *tracer) returnSide(tg resolver.AttachPoint) bool {
	return t.cfg.Latency && (tg.Ret || tg.RetInsn)
}

// measureProfile sets the profile kind of a measure mode.
func (t *tracer) measureProfile(prof *output.Profile) {
	switch t.cfg.MeasureMode() {
	case bpf.MeasureLatency:
		prof.Kind = output.KindLatency
	case bpf.MeasureWeight:
		prof.Kind = output.KindWeight
		prof.ValueType = fmt.Sprintf("arg%d", t.cfg.Weight.Arg)
		prof.ValueUnit = t.cfg.Weight.Unit
	}
}

// measureProbe gives the probe labelled label measure m: the profile's,
// when label is its only probe, else its own.
func (t *tracer) measureProbe(prof *output.Profile, label string, m output.Measure) {
	if len(slices.Compact(t.probeLabels())) == 1 {
		prof.Measure = m
		return
	}
	if prof.Measures == nil {
		prof.Measures = map[string]output.Measure{}
	}
	prof.Measures[label] = m
}

// stackedCalls are the calls counted with a stack, per probe id: those
// of snap and those merged during the run.
func (t *tracer) stackedCalls(snap *bpf.Snapshot) map[uint32]uint64 {
	stacked := map[uint32]uint64{}
	if t.folded != nil {
		maps.Copy(stacked, t.folded.calls)
	}
	for _, c := range snap.Counts {
		stacked[c.Probe] += c.Count
	}
	return stacked
}

// reportMeasures prints each probe's funclatency-style summary; stacked
// are stackedCalls.
func (t *tracer) reportMeasures(snap *bpf.Snapshot, stacked map[uint32]uint64, kind, unit string) {
	for id, pm := range snap.Probes {
		if id >= len(t.cfg.Probes) {
			break
		}
		s := output.ProbeSummary{
			Label: t.cfg.Probes[id].Text, Calls: pm.Calls, Total: pm.Total, Max: pm.Max,
			Hist: output.Histogram{Counts: pm.Hist, Sums: pm.HistSum}, Stacked: stacked[uint32(id)], MinLatency: uint64(t.cfg.MinLatency),
			Unwound: pm.Unwound, Exited: pm.Exited, Unmatched: pm.Unmatched, TooDeep: pm.TooDeep,
			NoRoom: pm.NoRoom, InFlight: pm.InFlight,
		}
		for _, line := range output.SummaryLines(s, kind, unit) {
			t.status.Infof("%s", line)
		}
	}
}

// weightArg is --weight's argument (0 without it).
func (cfg *Config) weightArg() int {
	if cfg.Weight == nil {
		return 0
	}
	return cfg.Weight.Arg
}
