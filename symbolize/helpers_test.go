package symbolize

import (
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

func uspec(target probespec.Target, kind probespec.MatcherKind, pattern string) probespec.Spec {
	return probespec.Spec{Kind: probespec.Uprobe, Target: target, Matcher: probespec.Matcher{Kind: kind, Pattern: pattern}}
}

func pathT(p string) probespec.Target { return probespec.Target{Kind: probespec.TargetPath, Name: p} }
func libT(n string) probespec.Target  { return probespec.Target{Kind: probespec.TargetLib, Name: n} }

// resolveOK resolves spec on this machine or fails the test: the places
// the tests symbolize.
func resolveOK(t *testing.T, spec probespec.Spec) []resolver.AttachPoint {
	t.Helper()
	ts, err := resolver.Resolve(spec, resolver.Scope{})
	if err != nil {
		t.Fatalf("Resolve(%+v): %v", spec, err)
	}
	return ts
}

// installFixture copies fixture binary name to dst, creating its directory.
func installFixture(t *testing.T, name, dst string) {
	t.Helper()
	maptest.Install(t, maptest.Fixture(t, name), dst)
}

// frameName is f's name as collapsed stacks show it (output.FrameName),
// without the kernel suffix.
func frameName(f output.Frame) string {
	f.Kernel = false
	return output.FrameName(f, false, false)
}
