package main

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// weightArg is --weight ARG[:UNIT]: the integer argument whose sum weighs
// each stack (arg0-arg5) and the unit pprof names it in (default bytes).
type weightArg struct {
	set  bool
	arg  int
	unit string
}

var weightRE = regexp.MustCompile(`^arg([0-5])(?::([A-Za-z][A-Za-z0-9_]{0,31}))?$`)

func (w *weightArg) String() string {
	if !w.set {
		return ""
	}
	return fmt.Sprintf("arg%d:%s", w.arg, w.unit)
}

// Set parses arg0..arg5 with an optional :UNIT (a word).
func (w *weightArg) Set(s string) error {
	m := weightRE.FindStringSubmatch(s)
	if m == nil {
		return errors.New("want arg0 to arg5, optionally with a unit: arg0, arg2:bytes, arg1:pages")
	}
	w.arg, _ = strconv.Atoi(m[1])
	w.unit = m[2]
	if w.unit == "" {
		w.unit = "bytes"
	}
	w.set = true
	return nil
}

// measureMode is what the run's function probes measure.
func (cfg *config) measureMode() bpf.MeasureMode {
	switch {
	case cfg.latency:
		return bpf.MeasureLatency
	case cfg.weight.set:
		return bpf.MeasureWeight
	}
	return bpf.MeasureCount
}

// validateMeasure checks --latency, --min-latency and --weight against
// each other and the probes: both measure functions from their entry.
func (cfg *config) validateMeasure() error {
	if cfg.minLatency != 0 && !cfg.latency {
		return usagef("--min-latency needs --latency (it keeps the stacks of the calls slower than it)")
	}
	if cfg.minLatency < 0 {
		return usagef("--min-latency %v: want a positive duration such as 5ms", cfg.minLatency)
	}
	if cfg.latency && cfg.weight.set {
		return usagef("--latency and --weight both given: a run measures either time or an argument; run probee twice")
	}
	flag := map[bool]string{true: "--latency", false: "--weight"}[cfg.latency]
	if !cfg.latency && !cfg.weight.set {
		return nil
	}
	if cfg.sample {
		return usagef("%s measures function probes; --sample has no calls to measure: run it apart", flag)
	}
	for _, p := range cfg.probes {
		if err := measurable(p, flag); err != nil {
			return err
		}
	}
	return nil
}

// measurable refuses what --latency and --weight cannot measure: both
// start at a function's entry.
func measurable(p probeArg, flag string) error {
	s := p.spec
	switch {
	case s.Kind == probespec.Tracepoint:
		return usagef("%s %s: %s measures functions (--uprobe, --kprobe) from their entry; a tracepoint has no return or arguments to read", p.flag, quote(p.text), flag)
	case s.Kind == probespec.USDT:
		return usagef("%s %s: %s measures functions (--uprobe, --kprobe) from their entry; a USDT probe is a point in the code, with no return, and its arguments are not function arguments: measure the function around it with --uprobe", p.flag, quote(p.text), flag)
	case s.Ret:
		return usagef("%s %s: %s measures each call from the function's entry: drop ret: (the return is found by itself)", p.flag, quote(p.text), flag)
	case s.Offset != 0:
		return usagef("%s %s: %s measures calls from the function's first instruction: drop +0x%x", p.flag, quote(p.text), flag, s.Offset)
	case s.IsSource():
		return usagef("%s %s: %s measures calls of functions: name the function, not a source line", p.flag, quote(p.text), flag)
	}
	return nil
}

// withReturns adds to a probe's targets what sees their returns: with
// --latency every function gets its return probes; without it the
// return probes of Go functions are moved to their RET instructions
// (resolver.ReturnTargets). Functions whose returns cannot be probed
// safely are dropped with a warning; none left is a usage error.
func (t *tracer) withReturns(p probeArg, targets []resolver.Target) ([]resolver.Target, error) {
	if p.spec.Kind == probespec.Tracepoint || (!t.cfg.latency && !p.spec.Ret) {
		return targets, nil
	}
	var out []resolver.Target
	var refused []error
	var byRET, byUret int // functions whose returns are probed each way
	for _, tg := range targets {
		switch {
		case p.spec.Kind == probespec.Kprobe && t.cfg.latency:
			ret := tg
			ret.Ret = true
			out = append(out, tg, ret)
		case t.cfg.latency:
			rets, err := t.res.ReturnTargets(tg, tg.Unwinds)
			if err != nil {
				refused = append(refused, err)
				continue
			}
			out = append(out, tg)
			out = append(out, rets...)
			if rets[0].RetInsn {
				byRET++
			} else {
				byUret++
			}
		case tg.Go:
			rets, err := t.res.ReturnTargets(tg, false)
			if err != nil {
				refused = append(refused, err)
				continue
			}
			out = append(out, rets...)
		default:
			out = append(out, tg)
		}
	}
	if len(out) == 0 && len(refused) > 0 {
		return nil, usagef("%s %s: %v", p.flag, quote(p.text), refused[0])
	}
	for i, err := range refused {
		if i == 10 {
			t.status.Warnf("%s: ... and %d more functions skipped", p.text, len(refused)-10)
			break
		}
		t.status.Warnf("%s: skipped: %v", p.text, err)
	}
	if byRET+byUret > 0 {
		t.status.Infof("%s: returns of %s at their RET instructions, of %s with uretprobes",
			p.text, plural(byRET, "function"), plural(byUret, "function"))
	}
	return out, nil
}

// returnSide reports whether tg is the return side of a timed function:
// its probe ends the call (bpf's return programs).
func (t *tracer) returnSide(tg resolver.Target) bool {
	return t.cfg.latency && (tg.Ret || tg.RetInsn)
}

// measureProfile sets the profile kind of a measure mode.
func (t *tracer) measureProfile(prof *output.Profile) {
	switch t.cfg.measureMode() {
	case bpf.MeasureLatency:
		prof.Kind = output.KindLatency
	case bpf.MeasureWeight:
		prof.Kind = output.KindWeight
		prof.ValueType = fmt.Sprintf("arg%d", t.cfg.weight.arg)
		prof.ValueUnit = t.cfg.weight.unit
	}
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
		if id >= len(t.cfg.probes) {
			break
		}
		s := output.ProbeSummary{
			Label: t.cfg.probes[id].text, Calls: pm.Calls, Total: pm.Total, Max: pm.Max,
			Hist: output.Histogram{Counts: pm.Hist, Sums: pm.HistSum}, Stacked: stacked[uint32(id)], MinLatency: uint64(t.cfg.minLatency),
			Unwound: pm.Unwound, Exited: pm.Exited, Unmatched: pm.Unmatched, TooDeep: pm.TooDeep,
			NoRoom: pm.NoRoom, InFlight: pm.InFlight,
		}
		for _, line := range output.SummaryLines(s, kind, unit) {
			t.status.Infof("%s", line)
		}
	}
}
