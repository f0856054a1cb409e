package bpf

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// resume sends SIGCONT only to the process that started at the recorded
// time: a pid now naming another process (a start time that differs) is
// left alone. A stopped child stands for both.
func TestResumeChecksStartTime(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	ticks, err := startTicks(pid)
	if err != nil {
		t.Fatal(err)
	}
	const tick = 1e9 / userHZ
	cases := []struct {
		name    string
		start   uint64 // ns since boot, as the gate records it
		wantErr error
		state   string // after resume
	}{
		{"another process", (ticks + 1) * tick, errReused, "T"},
		{"the stopped one", ticks*tick + tick/2, nil, "S"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			syscall.Kill(pid, syscall.SIGSTOP)
			waitState(t, pid, "T")
			if err := resume(pid, c.start); !errors.Is(err, c.wantErr) {
				t.Fatalf("resume: %v, want %v", err, c.wantErr)
			}
			waitState(t, pid, c.state)
		})
	}
}

// waitState waits up to a second for pid's state (/proc/PID/stat).
func waitState(t *testing.T, pid int, want string) {
	t.Helper()
	var got string
	for range 100 {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && len(b) > i+2 {
			got = string(b[i+2])
		}
		if got == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid %d in state %q, want %q", pid, got, want)
}
