package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestVerdicts(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want map[string]bool // met, per target
	}{
		{"all met", Result{Probee: Stats{Samples: 100, Reached: 99}, Perf: Stats{Samples: 50, Reached: 49}, Overlap: 0.9},
			map[string]bool{targetReach: true, targetVsPerf: true, targetOverlap: true}},
		{"95% is enough, below perf is not", Result{Probee: Stats{Samples: 100, Reached: 95}, Perf: Stats{Samples: 100, Reached: 96}, Overlap: 0.85},
			map[string]bool{targetReach: true, targetVsPerf: false, targetOverlap: true}},
		{"below 95% and 85%", Result{Probee: Stats{Samples: 1000, Reached: 949}, Perf: Stats{Samples: 10, Reached: 1}, Overlap: 0.849},
			map[string]bool{targetReach: false, targetVsPerf: true, targetOverlap: false}},
		{"JS share against perf's", Result{Options: Options{JS: true}, Probee: Stats{Samples: 10, Reached: 10, JS: 9}, Perf: Stats{Samples: 10, JS: 10}, Overlap: 1},
			map[string]bool{targetReach: true, targetVsPerf: true, targetOverlap: true, targetJS: false}},
		{"an event's overlap is its own target", Result{Options: Options{Event: eventUprobe}, Probee: Stats{Samples: 10, Reached: 10}, Perf: Stats{Samples: 10}, Overlap: 0.8},
			map[string]bool{targetReach: true, targetVsPerf: true, targetEvent: false}},
		{"so is one execution's", Result{Options: Options{Event: eventOnce}, Probee: Stats{Samples: 10, Reached: 10}, Perf: Stats{Samples: 10}, Overlap: 0.9},
			map[string]bool{targetReach: true, targetVsPerf: true, targetOnce: true}},
		{"no samples", Result{Perf: Stats{Samples: 10, Reached: 10}},
			map[string]bool{targetReach: false, targetVsPerf: false, targetOverlap: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, x := range tt.r.Verdicts() {
				if _, dup := got[x.Target]; dup {
					t.Errorf("two verdicts for %q", x.Target)
				}
				got[x.Target] = x.Met
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("met = %v, want %v", got, tt.want)
			}
		})
	}
}

// With a second perf run, the table and the overlap verdict give the
// overlap of the two perf runs beside probee's.
func TestPerfSelf(t *testing.T) {
	r := Result{Probee: Stats{Samples: 10}, Perf: Stats{Samples: 10}, Overlap: 0.2, PerfSelf: 0.35, HasPerfSelf: true}
	var b strings.Builder
	r.WriteTable(&b)
	if !strings.Contains(b.String(), "perf against a second perf run") || !strings.Contains(b.String(), "35.0%") {
		t.Errorf("table without the noise ceiling:\n%s", b.String())
	}
	if d := r.Verdicts()[2].Detail; d != "20.0% (perf vs perf 35.0%)" {
		t.Errorf("overlap verdict %q", d)
	}
}

// For node, the second perf run's share of named JS frames is printed
// beside the verdict, which still compares with the first run's.
func TestPerfSelfJS(t *testing.T) {
	r := Result{Options: Options{JS: true}, Probee: Stats{Samples: 100, JS: 95}, Perf: Stats{Samples: 100, JS: 96},
		HasPerfSelf: true, Perf2: Stats{Samples: 100, JS: 94}}
	var b strings.Builder
	r.WriteTable(&b)
	if !strings.Contains(b.String(), "in the second perf run") || !strings.Contains(b.String(), "94.0%") {
		t.Errorf("table without the second run's JS share:\n%s", b.String())
	}
	v := r.Verdicts()[3]
	if v.Met || v.Detail != "95.00% vs 96.00% (second perf run 94.00%)" {
		t.Errorf("JS verdict %+v", v)
	}
}

func TestSummary(t *testing.T) {
	in := []Verdict{
		{targetReach, "xz", "99.9%", true},
		{targetReach, "clang++", "60.0%", false},
		{targetOverlap, "xz", "97.0%", true},
	}
	var file bytes.Buffer
	if err := WriteVerdicts(&file, in); err != nil {
		t.Fatal(err)
	}
	back, err := ReadVerdicts(&file)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("read back %+v, want %+v", back, in)
	}
	var out strings.Builder
	WriteSummary(&out, back)
	want := targetReach + ": not met (xz 99.9%, clang++ 60.0% NOT MET)\n" +
		targetVsPerf + ": not measured (workload skipped)\n" +
		targetOverlap + ": met (xz 97.0%)\n" +
		targetEvent + ": not measured (workload skipped)\n" +
		targetOnce + ": not measured (workload skipped)\n" +
		targetJS + ": not measured (workload skipped)\n"
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
	if _, err := ReadVerdicts(strings.NewReader("a\tb\n")); err == nil {
		t.Error("ReadVerdicts of a short line: no error")
	}
}
