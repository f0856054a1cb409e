package push

import (
	"bytes"
	"fmt"

	"github.com/probee/probee/output"
)

// Profile names (__name__) by output kind; see the package doc.
var profileNames = map[string]string{
	output.KindSamples: "process_cpu",
	output.KindHits:    "probee_hits",
	output.KindLatency: "probee_latency",
	output.KindWeight:  "probee_weight",
	output.KindOffCPU:  "probee_off_cpu",
	output.KindWall:    "probee_wall",
}

// ProfileName is the __name__ of profiles of an output kind.
func ProfileName(kind string) string {
	if n, ok := profileNames[kind]; ok {
		return n
	}
	return "probee_" + kind
}

// splitProbes cuts d into one profile per probe that has samples, in the
// order of output.ProbeLabels (d.Probes, then labels only samples carry,
// sorted).
func splitProbes(d *output.Profile) []*output.Profile {
	byProbe := map[string][]output.Sample{}
	for _, s := range d.Samples {
		byProbe[s.Probe] = append(byProbe[s.Probe], s)
	}
	var out []*output.Profile
	for _, label := range output.ProbeLabels(d) {
		if len(byProbe[label]) == 0 {
			continue
		}
		sub := *d
		sub.Probes, sub.Samples, sub.Drops = []string{label}, byProbe[label], nil
		sub.Measure, sub.Measures = d.MeasureOf(label), nil
		out = append(out, &sub)
	}
	return out
}

// encode writes one probe's profile as pprof; the item is returned, with
// its event count, also on error.
func encode(p *output.Profile) (*item, error) {
	it := &item{probe: p.Probes[0], name: ProfileName(p.Kind)}
	for i := range p.Samples {
		it.events += p.Weight(&p.Samples[i])
	}
	var buf bytes.Buffer
	if err := output.WritePprof(&buf, p, output.Options{}); err != nil {
		return it, fmt.Errorf("encode profile of %s: %w", it.probe, err)
	}
	it.body = buf.Bytes()
	return it, nil
}
