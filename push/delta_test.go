package push

import (
	"fmt"
	"slices"
	"testing"

	"github.com/probee/probee/output"
)

// stack is a user stack of named frames at distinct addresses.
func stack(names ...string) []*output.Frame {
	var fs []*output.Frame
	for _, n := range names {
		var addr uint64
		for _, c := range n {
			addr = addr*31 + uint64(c)
		}
		fs = append(fs, &output.Frame{Name: n, Address: addr})
	}
	return fs
}

func sample(probe string, pid int, count uint64, frames ...string) output.Sample {
	return output.Sample{Probe: probe, PID: pid, Comm: "app", User: output.StackOf(stack(frames...)...), Count: count}
}

// summary renders a profile's samples as "probe pid leaf count" lines, sorted.
func summary(p *output.Profile) []string {
	var out []string
	for _, s := range p.Samples {
		out = append(out, fmt.Sprintf("%s %d %s %d/%d", s.Probe, s.PID, s.User.Leaf().Name, s.Count, s.Value))
	}
	slices.Sort(out)
	return out
}

// A second interval holds only the counts that are new since the first.
func TestDelta(t *testing.T) {
	cums := []*output.Profile{
		{Measure: output.Measure{Kind: output.KindHits}, Samples: []output.Sample{sample("a", 1, 5, "main", "f"), sample("b", 1, 2, "main", "g")}},
		{Measure: output.Measure{Kind: output.KindHits}, Samples: []output.Sample{sample("a", 1, 8, "main", "f"), sample("b", 1, 2, "main", "g"), sample("a", 2, 1, "main", "f")}},
		// Symbolized differently (same addresses), and two samples of one stack.
		{Measure: output.Measure{Kind: output.KindHits}, Samples: []output.Sample{
			{Probe: "a", PID: 1, Comm: "app", User: output.StackOf(renamed(stack("main", "f"))...), Count: 9},
			sample("b", 1, 3, "main", "g"), sample("b", 1, 1, "main", "g"), sample("a", 2, 1, "main", "f")}},
		{Measure: output.Measure{Kind: output.KindHits}, Samples: []output.Sample{sample("a", 1, 9, "main", "f")}},
	}
	want := [][]string{
		{"a 1 f 5/0", "b 1 g 2/0"},
		{"a 1 f 3/0", "a 2 f 1/0"},
		{"a 1 f? 1/0", "b 1 g 2/0"},
		nil,
	}
	var d Delta
	for i, cum := range cums {
		got := summary(d.Next(cum))
		if !slices.Equal(got, want[i]) {
			t.Errorf("interval %d: %q, want %q", i+1, got, want[i])
		}
	}
}

func renamed(fs []*output.Frame) []*output.Frame {
	for i := range fs {
		fs[i].Name += "?"
	}
	return fs
}

// Latency and weight profiles carry values: their deltas too.
func TestDeltaValues(t *testing.T) {
	var d Delta
	s := sample("a", 1, 2, "main", "f")
	s.Value = 100
	d.Next(&output.Profile{Measure: output.Measure{Kind: output.KindLatency}, Samples: []output.Sample{s}})
	s.Count, s.Value = 3, 250
	got := summary(d.Next(&output.Profile{Measure: output.Measure{Kind: output.KindLatency}, Samples: []output.Sample{s}}))
	if want := []string{"a 1 f 1/150"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
