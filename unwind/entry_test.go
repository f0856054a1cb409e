package unwind

import (
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// ld.so's entry code (_start, _dl_start_user) has no CFI: it gets an
// end-of-stack rule, so start-up constructor stacks end there complete
// (the return address of its call to _dl_init is in it). A program's
// _start has CFI of its own, which is kept.
func TestEntryFrames(t *testing.T) {
	ldso, err := filepath.EvalSymlinks("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skipf("no ld.so: %v", err)
	}
	for _, c := range []struct {
		path  string
		synth bool
	}{
		{ldso, true},
		{testgate.Fixture(t, filepath.Join(fixtureDir, "chain-fp")), false},
	} {
		f, tab := elfTable(t, c.path)
		synth := entryFrames(f, []*CFI{parseEhFrame(t, f)})
		if (synth != nil) != c.synth {
			t.Fatalf("%s: synthetic entry CFI %v, want %v", c.path, synth != nil, c.synth)
		}
		if r, ok := tab.Lookup(f.Entry + 4); !ok || r.CFA != CFAEndOfStack {
			t.Errorf("%s: rule at entry+4 = %+v (found %v), want end of stack", c.path, r, ok)
		}
		if c.synth {
			fde := synth.FDEs[0]
			if r, ok := tab.Lookup(fde.End); ok && r.CFA == CFAEndOfStack && fde.End-fde.Start < maxEntryCode {
				t.Errorf("%s: end of stack runs past the entry code into the next FDE at %#x", c.path, fde.End)
			}
		}
	}
}
