package main

import (
	"io"
	"testing"
)

func TestParseUnwind(t *testing.T) {
	cases := []struct {
		in            string
		want          unwindMode
		dwarf, goByFP bool
	}{
		{"auto", unwindAuto, true, true},
		{"fp", unwindFP, false, false},
		{"dwarf", unwindDWARF, true, false},
	}
	for _, c := range cases {
		m, err := parseUnwind(c.in)
		if err != nil || m != c.want || m.String() != c.in || m.dwarf() != c.dwarf || m.goByFramePointers() != c.goByFP {
			t.Errorf("parseUnwind(%q) = %v (dwarf %v, Go by FP %v), %v; want %v (%v, %v)",
				c.in, m, m.dwarf(), m.goByFramePointers(), err, c.want, c.dwarf, c.goByFP)
		}
	}
	for _, bad := range []string{"", "FP", "dwarf ", "frame-pointers"} {
		if m, err := parseUnwind(bad); err == nil {
			t.Errorf("parseUnwind(%q) = %v, want an error", bad, m)
		}
	}
	cfg, err := parseArgs([]string{"--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwind != unwindAuto {
		t.Errorf("default --unwind: %v, %v; want auto", cfg.unwind, err)
	}
	cfg, err = parseArgs([]string{"--unwind", "fp", "--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwind != unwindFP {
		t.Errorf("--unwind fp: %v, %v", cfg.unwind, err)
	}
}
