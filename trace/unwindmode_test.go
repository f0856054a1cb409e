package trace

import "testing"

func TestParseUnwind(t *testing.T) {
	cases := []struct {
		in            string
		want          UnwindMode
		dwarf, goByFP bool
	}{
		{"auto", UnwindAuto, true, true},
		{"fp", UnwindFP, false, false},
		{"dwarf", UnwindDWARF, true, false},
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
}
