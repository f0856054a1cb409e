package proctrack

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// startSleep starts a child process that sleeps; it is killed at the
// test's end.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// A -p process that exited before its pid entered the kernel's filter
// (the pid may be a new process's by then) is taken out of the filter
// again and not tracked: no snapshot, no tables, no gate. The pidfd is a
// real one, of a child that is killed and reaped (its pid free for reuse)
// before TracePidfd; the "reused" case fakes the exit seen after the pid
// entered the filter.
func TestTracePidfdExited(t *testing.T) {
	cases := []struct {
		name      string
		reap      bool // kill and reap the child before TracePidfd
		fakeExit  bool // the pidfd says it exited (whatever the child does)
		wantError bool
	}{
		{name: "alive"},
		{name: "exited and reaped", reap: true, wantError: true},
		{name: "exited after the filter entry", fakeExit: true, wantError: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil)
			cmd := startSleep(t)
			pid := cmd.Process.Pid
			tg, err := OpenPidfd(pid)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if c.reap {
				cmd.Process.Kill()
				cmd.Wait()
			}
			if c.fakeExit {
				tg.exitedNow = func() bool { return true }
			}
			err = r.tr.TracePidfd(tg)
			if got := errors.Is(err, ErrPidExited); got != c.wantError {
				t.Fatalf("TracePidfd: %v, want ErrPidExited: %v", err, c.wantError)
			}
			calls := r.k.calls()
			if !c.wantError {
				if len(calls) == 0 || calls[0] != fmt.Sprintf("AddPID %d", pid) || slices.Contains(calls, fmt.Sprintf("RemovePID %d", pid)) {
					t.Errorf("kernel calls %q: want AddPID %d first and no RemovePID", calls, pid)
				}
				return
			}
			if want := []string{fmt.Sprintf("AddPID %d", pid), fmt.Sprintf("RemovePID %d", pid)}; !slices.Equal(calls, want) {
				t.Errorf("kernel calls %q, want %q", calls, want)
			}
			if r.known(pid) {
				t.Errorf("pid %d is in the history", pid)
			}
		})
	}
}

// Exited is closed when the process exits, at once (no polling period),
// and not when the Pidfd is closed first.
func TestPidfdExited(t *testing.T) {
	cmd := startSleep(t)
	tg, err := OpenPidfd(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	select {
	case <-tg.Exited():
		t.Fatal("exited while the process runs")
	case <-time.After(50 * time.Millisecond):
	}
	cmd.Process.Kill()
	start := time.Now()
	select {
	case <-tg.Exited():
		t.Logf("exit seen after %v", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Fatal("exit not seen in 2 s")
	}

	other := startSleep(t)
	tg2, err := OpenPidfd(other.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tg2.Close()
	select {
	case <-tg2.Exited():
		t.Error("Exited closed by Close")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := OpenPidfd(cmd.Process.Pid + 1<<22); err == nil {
		t.Error("OpenPidfd of a pid past pid_max: no error")
	}
}
