package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/probee/probee/trace"
)

// A run's report is rendered as its status lines: hits per probe, the
// partial and finished stacks as information, drops and lost records as
// warnings (kept with -q), and "no drops" when nothing was lost.
func TestStatusReport(t *testing.T) {
	for _, c := range []struct {
		name  string
		rep   trace.Report
		quiet bool
		want  string
	}{
		{"clean", trace.Report{Probes: []trace.ProbeHits{{Label: "libc:malloc", Hits: 1, Event: "hit"}, {Label: "sample", Hits: 3, Event: "sample"}}}, false,
			"probee: libc:malloc: 1 hit\nprobee: sample: 3 samples\nprobee: no drops\n"},
		{"partial only", trace.Report{Probes: []trace.ProbeHits{{Label: "f", Hits: 0}}, Losses: []trace.Loss{
			{Kind: trace.Partial, Count: 4, Cause: "cut short"}, {Kind: trace.Finished, Count: 1, Cause: "taken early"}}}, false,
			"probee: f: 0 hits\nprobee: partial stacks: 4 cut short\nprobee: finished in user space: 1 stack taken early\nprobee: no drops\n"},
		{"drops", trace.Report{Losses: []trace.Loss{
			{Kind: trace.Dropped, Count: 2, Cause: "counts map full"}, {Kind: trace.Partial, Count: 1, Cause: "x"}, {Kind: trace.Lost, Count: 5, Cause: "mapping records lost"}}}, false,
			"probee: warning: dropped 2: counts map full\nprobee: partial stacks: 1 x\nprobee: warning: lost 5: mapping records lost\n"},
		{"quiet", trace.Report{Probes: []trace.ProbeHits{{Label: "f", Hits: 2}}, Losses: []trace.Loss{
			{Kind: trace.Dropped, Count: 2, Cause: "counts map full"}, {Kind: trace.Partial, Count: 1, Cause: "x"}}}, true,
			"probee: warning: dropped 2: counts map full\n"},
		{"quiet, no drops", trace.Report{Probes: []trace.ProbeHits{{Label: "f", Hits: 2}}}, true, ""},
	} {
		var b bytes.Buffer
		newStatus(&b, c.quiet, false).Report(&c.rep)
		if b.String() != c.want {
			t.Errorf("%s: printed\n%q\nwant\n%q", c.name, b.String(), c.want)
		}
	}
}

// Debug lines go to a terminal, or anywhere with -v; never with -q.
func TestStatusDebug(t *testing.T) {
	for _, c := range []struct {
		quiet, verbose bool
		want           string
	}{
		{false, false, ""},
		{false, true, "probee: x 1\n"},
		{true, true, ""},
	} {
		var b strings.Builder
		newStatus(&b, c.quiet, c.verbose).Debugf("x %d", 1)
		if b.String() != c.want {
			t.Errorf("quiet %v, verbose %v: %q, want %q", c.quiet, c.verbose, b.String(), c.want)
		}
	}
}
