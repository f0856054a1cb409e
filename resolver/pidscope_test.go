package resolver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/probespec"
)

// startSpin runs spin-nofp for a few seconds and returns its pid.
func startSpin(t *testing.T) (*exec.Cmd, string) {
	bin := fixture(t, "spin-nofp")
	cmd := exec.Command(bin, "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait until the dynamic loader has mapped libc.
	maps := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "maps")
	for i := 0; i < 100; i++ {
		if b, _ := os.ReadFile(maps); strings.Contains(string(b), "libc.so.6") {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd, bin
}

func TestPIDScope(t *testing.T) {
	cmd, bin := startSpin(t)
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
