package testgate

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
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

func TestParseRelease(t *testing.T) {
	tests := []struct {
		rel          string
		major, minor int
		ok           bool
	}{
		{"6.18.44-fc-v769", 6, 18, true},
		{"6.1.0-28-amd64", 6, 1, true},
		{"6.6", 6, 6, true},
		{"5.15.0rc1", 5, 15, true},
		{"6", 0, 0, false},
		{"x.1", 0, 0, false},
		{"6.-1", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, ok := parseRelease(tt.rel)
		if major != tt.major || minor != tt.minor || ok != tt.ok {
			t.Errorf("parseRelease(%q) = %d, %d, %v; want %d, %d, %v", tt.rel, major, minor, ok, tt.major, tt.minor, tt.ok)
		}
	}
}

func TestKernelAtLeast(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	major, minor, ok := parseRelease(unix.ByteSliceToString(u.Release[:]))
	if !ok {
		t.Fatalf("unreadable release %q", u.Release)
	}
	for _, tt := range []struct {
		major, minor int
		want         bool
	}{
		{major, minor, true}, {major, minor + 1, false}, {major + 1, 0, false},
		{major - 1, minor + 100, true}, {major, 0, true},
	} {
		if got := KernelAtLeast(tt.major, tt.minor); got != tt.want {
			t.Errorf("on %d.%d: KernelAtLeast(%d, %d) = %v, want %v", major, minor, tt.major, tt.minor, got, tt.want)
		}
	}
}
