package trace

import "testing"

func TestServiceName(t *testing.T) {
	for _, c := range []struct {
		flag    string
		command []string
		host    string
		want    string
	}{
		{"svc", []string{"/usr/bin/app"}, "h", "svc"},
		{"", []string{"/usr/bin/app", "x"}, "h", "app"},
		{"", nil, "h", "h"},
		{"", nil, "", "probee"},
	} {
		tr := &tracer{cfg: &Config{Command: c.command, Push: &Push{ServiceName: c.flag}}}
		if got := tr.serviceName(c.host); got != c.want {
			t.Errorf("%+v: %q, want %q", c, got, c.want)
		}
	}
}

func TestPushUnit(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sample: true}, "samples"},
		{Config{Sample: true, Probes: []Probe{{}}}, "events"}, // hits and samples
		{Config{OffCPU: true}, "ns"},
		{Config{Wall: true}, "ns"},
		{Config{Sample: true, Wall: true}, "events"}, // samples, and wall's ns
		{Config{OffCPU: true, Probes: []Probe{{}}}, "events"},
		{Config{Probes: []Probe{{}}}, "hits"},
		{Config{Probes: []Probe{{}}, Latency: true}, "ns"},
		{Config{Probes: []Probe{{}}, Weight: &Weight{Unit: "bytes"}}, "bytes"},
	} {
		tr := &tracer{cfg: &c.cfg}
		if got := tr.pushUnit(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cfg, got, c.want)
		}
	}
}
