package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// mixedProfile has a probe counted in hits, CPU samples and off-CPU time:
// three measures in one profile.
func mixedProfile() *Profile {
	f := func(name string) *Frame { return &Frame{Name: name} }
	return &Profile{
		Measure: Measure{Kind: KindHits},
		Measures: map[string]Measure{
			"sample":  {Kind: KindSamples, PeriodNanos: 1_000_000},
			"off-cpu": {Kind: KindOffCPU},
		},
		Probes: []string{"malloc", "sample", "off-cpu"},
		Samples: []Sample{
			{Probe: "malloc", PID: 1, Comm: "x", User: StackOf(f("main"), f("malloc")), Count: 5},
			{Probe: "sample", PID: 1, Comm: "x", User: StackOf(f("main"), f("spin")), Count: 3},
			{Probe: "off-cpu", PID: 1, Comm: "x", User: StackOf(f("main"), f("read")), Count: 2, Value: 7_000_000},
		},
	}
}

// Each probe weighs its samples by its own measure: hits, samples, and
// the nanoseconds off CPU (not the 2 blocks).
func TestMeasuresCollapsed(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, mixedProfile(), Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	want := "malloc;x;main;malloc 5\noff-cpu;x;main;read 7000000\nsample;x;main;spin 3\n"
	if buf.String() != want {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
}

// pprof gets each measure's sample types once; a sample fills its
// probe's columns and leaves the others 0.
func TestMeasuresPprof(t *testing.T) {
	prof := writePprof(t, mixedProfile())
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got, want := strings.Join(types, " "), "hits/count samples/count cpu/nanoseconds blocks/count off_cpu/nanoseconds"; got != want {
		t.Fatalf("sample types %s, want %s", got, want)
	}
	want := map[string]string{
		"malloc":  "[5 0 0 0 0]",
		"sample":  "[0 3 3000000 0 0]",
		"off-cpu": "[0 0 0 2 7000000]",
	}
	for _, s := range prof.Sample {
		probe := first(s.Label["probe"])
		if got := fmt.Sprint(s.Value); got != want[probe] {
			t.Errorf("%s: values %s, want %s", probe, got, want[probe])
		}
	}
	if len(prof.Sample) != len(want) {
		t.Errorf("%d samples, want %d", len(prof.Sample), len(want))
	}
}

// A probe's own flamegraph is titled and weighed in its measure.
func TestMeasuresSVGTitle(t *testing.T) {
	p := mixedProfile()
	for label, want := range map[string]string{
		"malloc":  "probe malloc — 5 hits",
		"sample":  "sample — 3 samples (≈ 0.003 s CPU)",
		"off-cpu": "time off CPU — 7,000,000 ns (7 ms)",
	} {
		if got := probeDoc(p, label, Options{}).title; got != want {
			t.Errorf("%s: title %q, want %q", label, got, want)
		}
	}
	// All three in one flamegraph: summed as they are, in "weight".
	d := combinedDoc(p, Options{WithProbe: true})
	if want := "3 probes — 7,000,008 weight"; d.title != want || d.unit != "weight" {
		t.Errorf("combined title %q (unit %q), want %q (weight)", d.title, d.unit, want)
	}
}

// A wall profile's samples fall in cpu or off_cpu by their state frame,
// and all in wall.
func TestMeasuresPprofWall(t *testing.T) {
	f := func(name string) *Frame { return &Frame{Name: name} }
	p := &Profile{Measure: Measure{Kind: KindWall, PeriodNanos: 1_000_000}, Probes: []string{"wall"},
		Samples: []Sample{
			{Probe: "wall", PID: 1, Comm: "x", User: StackOf(f("main"), f("spin")), Count: 3, Value: 3_000_000},
			{Probe: "wall", PID: 1, Comm: "x", User: StackOf(f("main"), f("read")),
				Kernel: StackOf(&Frame{Name: "schedule", Kernel: true}, f("[sleep]")), Count: 2, Value: 7_000_000},
		}}
	prof := writePprof(t, p)
	got := map[string]string{}
	for _, s := range prof.Sample {
		got[s.Location[len(s.Location)-1].Line[0].Function.Name+"/"+s.Location[0].Line[0].Function.Name] = fmt.Sprint(s.Value)
	}
	want := map[string]string{"main/spin": "[3000000 3000000 0]", "main/[sleep]": "[7000000 0 7000000]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("values %v, want %v", got, want)
	}
	if prof.DefaultSampleType != "wall" || prof.Period != 1_000_000 {
		t.Errorf("default %q period %d, want wall and 1 ms", prof.DefaultSampleType, prof.Period)
	}
}

// wakerProfile has one wait joined to its waker (--wakers): the kernel
// stack goes on past the state with "[woken by w]", the waker's kernel
// frame and its user frame.
func wakerProfile(kind string) *Profile {
	f := func(name string) *Frame { return &Frame{Name: name} }
	k := func(name string) *Frame { return &Frame{Name: name, Kernel: true} }
	return &Profile{Measure: Measure{Kind: kind, PeriodNanos: 1_000_000}, Probes: []string{"p"},
		Samples: []Sample{{Probe: "p", PID: 1, Comm: "x", User: StackOf(f("main"), f("read")),
			Kernel: StackOf(k("schedule"), f("[sleep]"), f(WokenBy+"w]"), k("try_to_wake_up"), f("write"), f("feed")),
			Count:  2, Value: 7_000_000}}}
}

// The waker's user frames are user frames in every output: no "_[k]" in
// collapsed stacks, not in the kernel's mapping in pprof; and a wall
// profile counts the wait as off CPU.
func TestWakerFrames(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, wakerProfile(KindOffCPU), Options{}); err != nil {
		t.Fatal(err)
	}
	want := "x;main;read;schedule_[k];[sleep];[woken by w];try_to_wake_up_[k];write;feed 7000000\n"
	if buf.String() != want {
		t.Errorf("collapsed %q, want %q", buf.String(), want)
	}
	prof := writePprof(t, wakerProfile(KindWall))
	var names []string
	for _, loc := range prof.Sample[0].Location {
		name := loc.Line[0].Function.Name
		if loc.Mapping != nil && loc.Mapping.File == kernelMapping {
			name += "_[k]"
		}
		names = append(names, name)
	}
	if got, want := strings.Join(names, ";"), "feed;write;try_to_wake_up_[k];[woken by w];[sleep]_[k];schedule_[k];read;main"; got != want {
		t.Errorf("pprof locations %s, want %s", got, want)
	}
	if got := fmt.Sprint(prof.Sample[0].Value); got != "[7000000 0 7000000]" {
		t.Errorf("wall values %s, want [7000000 0 7000000] (wall, cpu, off_cpu)", got)
	}
}
