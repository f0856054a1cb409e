package testgate

import (
	"errors"
	"fmt"
	"testing"
)

// Feature with a nil error lets the test go on: no skip, no failure, with
// and without PROBEE_REQUIRE_KERNEL. (A skip in a subtest does not fail its
// parent: the parent checks that the subtest ran to its end unskipped.)
func TestFeatureNilErrorRuns(t *testing.T) {
	for _, env := range []string{"0", "1"} {
		for _, expected := range []bool{true, false} {
			t.Setenv(EnvRequire, env)
			var sub *testing.T
			reached := false
			t.Run(fmt.Sprintf("require=%s,expected=%v", env, expected), func(t *testing.T) {
				sub = t
				Feature(t, "present", expected, nil)
				reached = true
			})
			if !reached || sub.Skipped() || sub.Failed() {
				t.Errorf("require=%s expected=%v: Feature with a nil error stopped the test (skipped %v, failed %v)",
					env, expected, sub.Skipped(), sub.Failed())
			}
		}
	}
}

func TestFeatureMissingSkips(t *testing.T) {
	t.Setenv(EnvRequire, "0")
	ran := false
	t.Run("sub", func(t *testing.T) {
		defer func() { ran = true }()
		Feature(t, "made-up", true, errors.New("no"))
		t.Error("Feature did not skip")
	})
	if !ran {
		t.Fatal("subtest did not run")
	}
}
