package trace

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procState is the state letter of /proc/PID/stat ("t": tracing stop).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+2:]
	return rest[:1]
}

// A command starts stopped right after its exec, before its first
// instruction: its /proc/PID/exe is already the program (nothing of probee
// runs in it), it is in a tracing stop, and it has done nothing (the file
// it creates does not exist). Released, it runs to its own exit status.
func TestStartPaused(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "ran")
	tc, err := startPaused([]string{"sh", "-c", "touch " + mark + "; exit 3"}, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(tc.pid()), "exe"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(tc.cmd.Path)
	if err != nil {
		t.Fatal(err)
	}
	if exe != want {
		t.Errorf("stopped command runs %s, want %s (its exec done)", exe, want)
	}
	if st := procState(t, tc.pid()); st != "t" {
		t.Errorf("stopped command in state %q, want t (tracing stop)", st)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(mark); err == nil {
		t.Error("the command ran before it was released")
	}
	if err := tc.release(); err != nil {
		t.Fatal(err)
	}
	<-tc.done
	if tc.exitCode() != 3 {
		t.Errorf("exit code %d (%s), want 3", tc.exitCode(), tc.status())
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the released command did not run: %v", err)
	}
}

// A command aborted before its release is killed without running.
func TestAbortPaused(t *testing.T) {
	tc, err := startPaused([]string{"sleep", "100"}, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tc.abort()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("abort took %v", d)
	}
	if tc.exitCode() != 128+9 {
		t.Errorf("aborted command: exit code %d (%s), want 137 (SIGKILL)", tc.exitCode(), tc.status())
	}
}

// A program the kernel will not run is a usage error naming it.
func TestStartPausedErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := startPaused([]string{garbage}, os.Stdout)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "cannot run "+garbage) {
		t.Errorf("garbage program: error %v, want a usage error saying it cannot run", err)
	}
}
