package e2e

import (
	"strings"
	"testing"
)

// --list-probes takes its specs as arguments, with flags on either side
// (issue 13: --json and -v were once taken as the spec).
func TestListProbesFlagOrder(t *testing.T) {
	bin := fixture(t, "chain-fp")
	r := run(t, "", "--list-probes", bin+":leaf", "--json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"kind":"uprobe","path":"`+bin+`"`) || !strings.Contains(r.stdout, `"symbol":"leaf"`) ||
		strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--list-probes SPEC --json: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(t, "", "--list-probes", "-v", bin+":leaf", bin+":regex:^foo_")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	want := []string{"foo_one", "foo_two", "leaf"}
	if r.code != 0 || len(lines) != len(want) {
		t.Fatalf("--list-probes -v SPEC SPEC2: exit %d, stdout %q; want %d lines", r.code, r.stdout, len(want))
	}
	for i, sym := range want {
		if !strings.HasPrefix(lines[i], "uprobe:"+bin+":"+sym+" ") || !strings.Contains(lines[i], " addr=0x") {
			t.Errorf("line %d: %q, want uprobe:%s:%s with its address", i+1, lines[i], bin, sym)
		}
	}
}
