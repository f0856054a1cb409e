package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// Ctrl-C while the probes are being attached (issue 44): probee stops
// attaching, hands the links it made to its watchdog to detach (the
// kernel takes 20-40 ms a link) and exits within 200 ms; the command,
// held at its exec, never runs (it would create a file), and nothing is
// left stopped. 1,000 probes (of one file) make the attach long; the SIGINT comes once
// 200 uprobe_multi links are in probee's files (detached one by one, they
// took 4-9 s). Before, the attach went on (42 s) and the command ran.
func TestInterruptDuringAttach(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	dir := t.TempDir()
	flag := filepath.Join(dir, "ran")
	// 1,000 specs of one file: hard links to a copy of it (in the same
	// directory, so on the same file system), since a spec given twice
	// is traced once.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "chain-fp")
	if err := os.WriteFile(one, data, 0o755); err != nil {
		t.Fatal(err)
	}
	var args []string
	for i := range 1000 {
		link := filepath.Join(dir, fmt.Sprintf("chain-%d", i))
		if err := os.Link(one, link); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--uprobe", link+":leaf")
	}
	args = append(args, "--", "sh", "-c", "touch "+flag)
	marker := fmt.Sprintf("PROBEE_INTERRUPT_TEST=%d", os.Getpid())
	defer killMarked(marker)
	cmd := exec.Command(probee, args...)
	cmd.Env = append(os.Environ(), marker)
	cmd.Dir = dir
	isolateMounts(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitLinks(cmd.Process.Pid, 200, 30*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("not 200 uprobe_multi links in 30 s\n%s", stderr.String())
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	took := time.Since(sent)
	t.Logf("exit %d %v after SIGINT\n%s", cmd.ProcessState.ExitCode(), took, stderr.String())
	if _, err := os.Stat(flag); err == nil {
		t.Error("the command ran")
	}
	if !strings.Contains(stderr.String(), "interrupted while attaching") {
		t.Errorf("no 'interrupted while attaching' on stderr")
	}
	// 200 ms, and 300 ms more for a busy machine (other processes attaching
	// or detaching uprobes hold the kernel lock every attach takes).
	if took > 500*time.Millisecond {
		t.Errorf("probee exited %v after SIGINT, want within 200 ms", took)
	}
	if left := leftStopped(marker, time.Second); left != "" {
		t.Errorf("left stopped: %s", left)
	}
}

// waitLinks waits until process pid has n uprobe_multi links among its
// files.
func waitLinks(pid, n int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", pid))
		links := 0
		for _, f := range infos {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "link_type:\tuprobe_multi") {
				links++
			}
		}
		if links >= n {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// leftStopped waits up to timeout for no process carrying marker to be
// stopped; it says which are, then.
func leftStopped(marker string, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	for {
		var bad []string
		for _, pr := range markedProcs(marker) {
			if pr.state == "T" || pr.state == "t" {
				bad = append(bad, fmt.Sprintf("pid %d (%s)", pr.pid, pr.comm))
			}
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			return strings.Join(bad, ", ")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
