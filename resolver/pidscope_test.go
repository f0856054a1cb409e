package resolver

import (
	"path/filepath"
	"strings"
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

// A kernel thread (kthreadd, pid 2) maps no file: the error says so, where
// it listed the process's files, none ("it has: ").
func TestPIDKernelThread(t *testing.T) {
	_, err := Resolve(uspec(libT("c"), probespec.MatchExact, "malloc"), Scope{PID: 2})
	if err == nil || !strings.Contains(err.Error(), "pid 2 maps no program file: a kernel thread") {
		t.Errorf("libc:malloc in kthreadd: %v", err)
	}
}
