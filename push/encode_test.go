package push

import (
	"testing"

	"github.com/probee/probee/output"
)

// Each probe's profile carries that probe's measure: its name and its
// pprof sample types are those of its unit (hits, CPU samples, time off
// CPU, wall-clock time), not the run's first probe's.
func TestSplitProbesMeasures(t *testing.T) {
	st := output.StackOf(&output.Frame{Name: "main"})
	d := &output.Profile{
		Measure: output.Measure{Kind: output.KindHits},
		Measures: map[string]output.Measure{
			"sample":  {Kind: output.KindSamples, PeriodNanos: 1_000_000},
			"off-cpu": {Kind: output.KindOffCPU},
		},
		Probes: []string{"malloc", "sample", "off-cpu"},
		Samples: []output.Sample{
			{Probe: "malloc", PID: 1, Comm: "x", User: st, Count: 5},
			{Probe: "sample", PID: 1, Comm: "x", User: st, Count: 3},
			{Probe: "off-cpu", PID: 1, Comm: "x", User: st, Count: 2, Value: 7_000_000},
		},
	}
	want := map[string]struct {
		name   string
		events uint64
	}{"malloc": {"probee_hits", 5}, "sample": {"process_cpu", 3}, "off-cpu": {"probee_off_cpu", 7_000_000}}
	subs := splitProbes(d)
	if len(subs) != 3 {
		t.Fatalf("%d profiles, want 3", len(subs))
	}
	for _, sub := range subs {
		it, err := encode(sub)
		if err != nil {
			t.Fatal(err)
		}
		w := want[it.probe]
		if it.name != w.name || it.events != w.events || len(sub.Measures) != 0 {
			t.Errorf("%s: name %s, %d events, measures %v; want %s, %d, none", it.probe, it.name, it.events, sub.Measures, w.name, w.events)
		}
	}
	if ProfileName(output.KindWall) != "probee_wall" {
		t.Errorf("wall profiles are named %s", ProfileName(output.KindWall))
	}
}
