package objfile_test

import (
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// fixture returns the path of a fixture binary, skipping when missing.
func fixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "tests", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

// pathSpec is a uprobe spec of the functions of the file at p matching
// pattern.
func pathSpec(p string, kind probespec.MatcherKind, pattern string) probespec.Spec {
	return probespec.Spec{Kind: probespec.Uprobe, Target: probespec.Target{Kind: probespec.TargetPath, Name: p},
		Matcher: probespec.Matcher{Kind: kind, Pattern: pattern}}
}

// Listing demangles nothing; a demangled pattern demangles only the names
// that contain its identifiers (resolver's prefilter keeps the others from
// DemangledName's cache).
func TestDemangleLazily(t *testing.T) {
	p := fixture(t, "cxx")
	r := resolver.New(resolver.Scope{})
	if ts, err := r.Resolve(pathSpec(p, probespec.MatchGlob, "*")); err != nil || len(ts) < 10 {
		t.Fatalf("*: %d targets, %v", len(ts), err)
	}
	o, err := r.Index().Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(objfile.DemangledSoFar(o)); n != 0 {
		t.Errorf("listing * demangled %d names", n)
	}
	ts, err := r.Resolve(pathSpec(p, probespec.MatchDemangled, "ns::Klass::method"))
	if err != nil || len(ts) != 1 {
		t.Fatalf("ns::Klass::method: %d targets, %v", len(ts), err)
	}
	var want, got []string
	done := objfile.DemangledSoFar(o)
	for i, s := range o.Funcs {
		if strings.Contains(s.Name, "Klass") && strings.Contains(s.Name, "method") {
			want = append(want, s.Name)
		}
		if done[i] {
			got = append(got, s.Name)
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("demangled %q, want only %q", got, want)
	}
	if d := ts[0].DemangledName(); d != "ns::Klass::method(int)" || ts[0].Demangled != "" {
		t.Errorf("Demangled %q, DemangledName() %q", ts[0].Demangled, d)
	}
}
