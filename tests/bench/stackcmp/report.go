package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// The targets, in the order summary prints them.
const (
	targetReach   = "probee reaches the outermost frame in >= 95% of samples"
	targetVsPerf  = "probee reaches the outermost frame no less often than perf"
	targetOverlap = "caller-chain overlap with perf >= 85%"
	targetEvent   = "caller-chain overlap with perf >= 85% at a function's entry (uprobe)"
	targetOnce    = "caller-chain overlap with perf >= 85% on the events of one execution (page faults, system calls)"
	targetJS      = "samples with a named JS frame >= perf's (node)"
)

var targets = []string{targetReach, targetVsPerf, targetOverlap, targetEvent, targetOnce, targetJS}

// The kinds of events compared instead of timer samples (Options.Event).
const (
	eventUprobe = "uprobe" // a uprobe's hits at a function's entry, run by run
	eventOnce   = "once"   // every event of a kind in one execution traced by both tools at once
)

// eventKinds give each kind its overlap target and the note under its table.
var eventKinds = map[string]struct{ target, note string }{
	eventUprobe: {targetEvent, "samples are a uprobe's hits at a function's entry: the same calls under both tools"},
	eventOnce:   {targetOnce, "samples are the events of one execution traced by both tools at once: the same events, wherever they happen"},
}

// Verdict is one workload's result for one target.
type Verdict struct {
	Target, Workload, Detail string
	Met                      bool
}

// Options say how one workload is compared.
type Options struct {
	JS   bool   // a JavaScript workload: named JS frames count
	From string // caller chains start at this frame where they hold it (see callerChains)
	// Event, when set, says the samples are events both tools saw alike,
	// so the overlap measures unwinding alone and has its own target:
	// eventUprobe (targetEvent) or eventOnce (targetOnce).
	Event string
}

// Result is everything compare prints for one workload.
type Result struct {
	Name         string
	Options      Options
	Probee, Perf Stats
	Overlap      float64
	// PerfSelf is the overlap of two perf runs of the command (when
	// HasPerfSelf): how far the caller-chain distribution of a run varies
	// by itself, the ceiling of any overlap with perf.
	PerfSelf    float64
	HasPerfSelf bool
	Perf2       Stats // the second perf run's figures (when HasPerfSelf)
	// Inner and PerfSelfInner are the same two overlaps over the leaf's
	// InnerCallers innermost callers (InnerOverlap).
	Inner, PerfSelfInner float64
}

// Compare computes the Result of one workload; probee's unnamed frames take
// perf's names (LendNames).
func Compare(name string, probee, perf Profile, o Options) Result {
	LendNames(probee, perf)
	return Result{Name: name, Options: o, Probee: Measure(probee), Perf: Measure(perf), Overlap: Overlap(probee, perf, o.From),
		Inner: InnerOverlap(probee, perf, InnerCallers)}
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// pct2 is for comparisons, where one decimal may print two different
// shares alike.
func pct2(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

func depth(st Stats) string {
	if st.Samples == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(st.Frames)/float64(st.Samples))
}

// WriteTable prints r side by side, probee | perf, with the targets.
func (r Result) WriteTable(w io.Writer) {
	row := func(label, a, b, target string) {
		fmt.Fprintf(w, "  %-32s %10s %10s   %s\n", label, a, b, target)
	}
	row("", "probee", "perf", "target")
	row("samples", fmt.Sprint(r.Probee.Samples), fmt.Sprint(r.Perf.Samples), "")
	row("reach outermost frame", pct(Share(r.Probee.Reached, r.Probee.Samples)),
		pct(Share(r.Perf.Reached, r.Perf.Samples)), ">= 95%, >= perf")
	row("mean depth (user frames)", depth(r.Probee), depth(r.Perf), "")
	row("samples without a caller", pct(Share(r.Probee.LeafOnly, r.Probee.Samples)),
		pct(Share(r.Perf.LeafOnly, r.Perf.Samples)), "(a walk that failed at once)")
	row("caller-chain overlap", pct(r.Overlap), "", ">= 85%")
	if r.HasPerfSelf {
		row("  perf against a second perf run", "", pct(r.PerfSelf), "(the noise ceiling)")
	}
	row(fmt.Sprintf("  innermost %d callers only", InnerCallers), pct(r.Inner), "", "")
	if r.HasPerfSelf {
		row("  perf against a second perf run", "", pct(r.PerfSelfInner), "")
	}
	if r.Options.From != "" {
		fmt.Fprintf(w, "    (caller chains compared from %s on, where they hold it)\n", r.Options.From)
	}
	if k, ok := eventKinds[r.Options.Event]; ok {
		fmt.Fprintf(w, "    (%s)\n", k.note)
	}
	if r.Options.JS {
		row("samples with a named JS frame", pct(Share(r.Probee.JS, r.Probee.Samples)),
			pct(Share(r.Perf.JS, r.Perf.Samples)), ">= perf")
		if r.HasPerfSelf {
			row("  in the second perf run", "", pct(Share(r.Perf2.JS, r.Perf2.Samples)), "(how much it varies)")
		}
	}
}

// Verdicts are r's results against each target that applies to it.
func (r Result) Verdicts() []Verdict {
	reach := Share(r.Probee.Reached, r.Probee.Samples)
	perfReach := Share(r.Perf.Reached, r.Perf.Samples)
	v := []Verdict{
		{targetReach, r.Name, pct(reach), reach >= 0.95},
		{targetVsPerf, r.Name, pct2(reach) + " vs " + pct2(perfReach), reach >= perfReach},
	}
	overlap := targetOverlap
	if k, ok := eventKinds[r.Options.Event]; ok {
		overlap = k.target
	}
	v = append(v, Verdict{overlap, r.Name, pct(r.Overlap) + r.selfNote(), r.Overlap >= 0.85})
	if r.Options.JS {
		js, perfJS := Share(r.Probee.JS, r.Probee.Samples), Share(r.Perf.JS, r.Perf.Samples)
		detail := pct2(js) + " vs " + pct2(perfJS)
		if r.HasPerfSelf {
			detail += " (second perf run " + pct2(Share(r.Perf2.JS, r.Perf2.Samples)) + ")"
		}
		v = append(v, Verdict{targetJS, r.Name, detail, js >= perfJS})
	}
	return v
}

// selfNote gives the noise ceiling beside an overlap.
func (r Result) selfNote() string {
	if !r.HasPerfSelf {
		return ""
	}
	return " (perf vs perf " + pct(r.PerfSelf) + ")"
}

// WriteVerdicts appends v as tab-separated lines.
func WriteVerdicts(w io.Writer, v []Verdict) error {
	for _, x := range v {
		met := "met"
		if !x.Met {
			met = "not met"
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", x.Target, x.Workload, x.Detail, met); err != nil {
			return err
		}
	}
	return nil
}

// ReadVerdicts reads what WriteVerdicts wrote.
func ReadVerdicts(r io.Reader) ([]Verdict, error) {
	var v []Verdict
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("verdicts line %d: want 4 tab-separated fields, got %q", n, sc.Text())
		}
		v = append(v, Verdict{f[0], f[1], f[2], f[3] == "met"})
	}
	return v, sc.Err()
}

// WriteSummary prints one line per target: met when every workload
// measured met it, with each workload's figure.
func WriteSummary(w io.Writer, v []Verdict) {
	for _, t := range targets {
		var parts []string
		met, seen := true, false
		for _, x := range v {
			if x.Target != t {
				continue
			}
			seen = true
			met = met && x.Met
			mark := ""
			if !x.Met {
				mark = " NOT MET"
			}
			parts = append(parts, x.Workload+" "+x.Detail+mark)
		}
		switch {
		case !seen:
			fmt.Fprintf(w, "%s: not measured (workload skipped)\n", t)
		case met:
			fmt.Fprintf(w, "%s: met (%s)\n", t, strings.Join(parts, ", "))
		default:
			fmt.Fprintf(w, "%s: not met (%s)\n", t, strings.Join(parts, ", "))
		}
	}
}
