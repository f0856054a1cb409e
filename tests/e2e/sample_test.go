package e2e

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// Sampling the no-FP spinner at 499 Hz: >= 95% of its samples reach main.
// The spinner runs 2 s of wall time, about 1000 samples on an idle
// machine; on a loaded one it gets less CPU, so 100 samples are enough for
// the ratio.
func TestSampleSpinFullChain(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "spin-nofp")
	r := run(t, "", "--sample", "-F", "499", "--", bin, "2")
	stacks := folded(t, r.stdout)
	var all, full uint64
	for st, n := range stacks {
		if !strings.HasPrefix(st, "sample;spin-nofp;") {
			continue
		}
		all += n
		if strings.Contains(st, ";main;") {
			full += n
		}
	}
	t.Logf("%d of %d samples reach main", full, all)
	if all < 100 || float64(full) < 0.95*float64(all) {
		t.Errorf("%d of %d samples reach main, want >= 95%% of >= 100\n%s", full, all, r.stderr)
	}
}

// Sampling deep recursion with tail calls: stacks >= 145 frames deep. The
// recursion spends equal time at each of its 150 levels, so about 3% of the
// samples (~1000 in ~1 s at 999 Hz) are that deep; with 300 samples, none
// were, once in a while.
func TestSampleDeepRecursion(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "recurse-nofp")
	r := run(t, "", "--sample", "-F", "999", "--", bin, "150", "1000000")
	deepest := 0
	for st := range folded(t, r.stdout) {
		if strings.HasPrefix(st, "sample;recurse-nofp;") {
			deepest = max(deepest, userDepth(st))
		}
	}
	if deepest < 145 {
		t.Errorf("deepest sampled stack has %d user frames, want >= 145\n%s", deepest, r.stderr)
	}
}
