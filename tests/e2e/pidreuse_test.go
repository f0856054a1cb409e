package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// A -p process's pid given to a new process at once is not traced
// (issue 44.7): probee ends when the process exits, seen through its
// pidfd, and the kernel took the pid out of the filter as the process
// exited. The new process runs the same program under another name (its
// comm) and gets the pid through ns_last_pid, within milliseconds of the
// exit; before, probee polled /proc/PID every 50 ms, found the new
// process there, and counted its hits under the old one's pid.
func TestPIDReuse(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	const n = "876543129"
	defer killStray(n)
	other := filepath.Join(t.TempDir(), "reusedpid")
	if err := os.Symlink(bin, other); err != nil {
		t.Fatal(err)
	}
	target := exec.Command(bin, n)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	pid := target.Process.Pid
	dir := t.TempDir()
	b := start(t, dir, "--uprobe", bin+":leaf", "-p", strconv.Itoa(pid), "-d", "3s", "-o", "x.folded")
	b.waitFor(t, "attached", 20*time.Second)
	time.Sleep(200 * time.Millisecond)
	target.Process.Kill()
	target.Wait()
	exited := time.Now()
	reused := startWithPID(t, pid, other, n)
	if reused == nil {
		t.Skipf("no process got pid %d again (other processes took the next pids): nothing to check", pid)
	}
	defer func() { reused.Process.Kill(); reused.Wait() }()
	t.Logf("pid %d reused %v after the exit", pid, time.Since(exited))
	b.wait(t, 10*time.Second)
	if took := time.Since(exited); took > 2*time.Second || !strings.Contains(b.stderr(), "exited") {
		t.Errorf("probee ended %v after the process exited (-d 3s), want at once and 'exited'", took)
	}
	data, err := os.ReadFile(filepath.Join(dir, "x.folded"))
	if err != nil {
		t.Fatal(err)
	}
	stacks := folded(t, string(data))
	if total(stacks) == 0 {
		t.Fatalf("no hits of the -p process\n%s", b.stderr())
	}
	for s, c := range stacks {
		if strings.Contains(s, ";reusedpid;") {
			t.Errorf("the new process with the pid was traced: %s %d", s, c)
		}
	}
}

// startWithPID starts path with args as pid (free now), through
// ns_last_pid; nil when other processes took it first (10 tries).
func startWithPID(t *testing.T, pid int, path string, args ...string) *exec.Cmd {
	t.Helper()
	for range 10 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("set ns_last_pid: %v", err)
		}
		cmd := exec.Command(path, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if cmd.Process.Pid == pid {
			return cmd
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil
}
