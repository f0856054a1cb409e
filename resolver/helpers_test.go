package resolver

import (
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

// llvmLib is a big C++ library (Debian's libllvm14: 34000 functions) for
// tests and benchmarks of the symbol scan, which skip it when missing.
const llvmLib = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

func uspec(target probespec.Target, kind probespec.MatcherKind, pattern string) probespec.Spec {
	return probespec.Spec{Kind: probespec.Uprobe, Target: target, Matcher: probespec.Matcher{Kind: kind, Pattern: pattern}}
}

func pathT(p string) probespec.Target { return probespec.Target{Kind: probespec.TargetPath, Name: p} }
func libT(n string) probespec.Target  { return probespec.Target{Kind: probespec.TargetLib, Name: n} }

func symbols(ts []AttachPoint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Symbol)
	}
	return out
}

// resolveOK resolves or fails the test.
func resolveOK(t *testing.T, spec probespec.Spec, scope Scope) []AttachPoint {
	t.Helper()
	ts, err := Resolve(spec, scope)
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
