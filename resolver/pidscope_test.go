package resolver

import (
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func TestPIDScope(t *testing.T) {
	cmd, bin := maptest.StartSpin(t)
	scope := Scope{PID: cmd.Process.Pid}
	ts := resolveOK(t, uspec(probespec.Target{}, probespec.MatchExact, "spin_leaf"), scope)
	if len(ts) != 1 || ts[0].Path != bin {
		t.Fatalf("spin_leaf in pid = %v", lines(ts))
	}
	ts = resolveOK(t, uspec(libT("libc"), probespec.MatchExact, "malloc"), scope)
	if len(ts) != 1 || filepath.Base(ts[0].Path) != "libc.so.6" {
		t.Fatalf("libc:malloc in pid = %v", lines(ts))
	}
	if _, err := Resolve(uspec(libT("fx"), probespec.MatchExact, "x"), scope); err == nil {
		t.Error("library not mapped by the pid resolved")
	}
	if _, err := Resolve(uspec(libT("c"), probespec.MatchExact, "x"), Scope{PID: 1 << 30}); err == nil {
		t.Error("nonexistent pid resolved")
	}
}
