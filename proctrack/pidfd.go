package proctrack

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Pidfd is the -p process, held by a pidfd from the start of the run:
// a pid names a process only until it exits, and the kernel may give it
// to a new process at once (within milliseconds on a busy machine). The
// pidfd names the process itself: its exit is seen the moment it happens
// (Exited), and a pid put in the kernel's filter after the process
// exited, which may name another process, is taken out again
// (Tracker.TracePidfd). Once in the filter, the pid leaves it in the
// kernel as the process's last thread exits (probee_exit), before the
// pid can be reused.
type Pidfd struct {
	pid    int
	f      *os.File // the pidfd, non-blocking: Go's poller waits on it
	exited chan struct{}
	// exitedNow reports whether the process has exited (the pidfd is
	// readable); tests replace it.
	exitedNow func() bool
}

// ErrPidExited means the -p process exited before tracing began.
var ErrPidExited = errors.New("the process exited before tracing began")

// OpenPidfd opens a pidfd of process pid and starts watching it.
func OpenPidfd(pid int) (*Pidfd, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("open pid %d: %w", pid, err)
	}
	t := &Pidfd{pid: pid, f: os.NewFile(uintptr(fd), fmt.Sprintf("pidfd %d", pid)), exited: make(chan struct{})}
	t.exitedNow = func() bool { return pidfdReadable(fd) }
	go t.wait()
	return t, nil
}

// PID is the process's pid.
func (t *Pidfd) PID() int { return t.pid }

// Exited is closed when the process exits.
func (t *Pidfd) Exited() <-chan struct{} { return t.exited }

// Close stops watching the process.
func (t *Pidfd) Close() { t.f.Close() }

// wait closes exited when the process exits; it returns when the pidfd
// is closed.
func (t *Pidfd) wait() {
	rc, err := t.f.SyscallConn()
	if err != nil {
		return
	}
	exited := false
	rc.Read(func(fd uintptr) bool {
		exited = pidfdReadable(int(fd))
		return exited
	})
	if exited {
		close(t.exited)
	}
}

// pidfdReadable reports whether the process of pidfd fd has exited.
func pidfdReadable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
}

// TracePidfd follows the -p process as TracePID does. A process that
// exited before its pid entered the kernel's filter (the pid may be a new
// process's by then) is taken out of the filter again, before any of its
// events are read: ErrPidExited.
func (t *Tracker) TracePidfd(tg *Pidfd) error {
	if err := t.k.AddPID(tg.pid); err != nil {
		return err
	}
	// Alive now, it was alive when its pid entered the filter: the
	// entry is its own, and the kernel takes it out at its exit.
	if tg.exitedNow() {
		if err := t.k.RemovePID(tg.pid); err != nil {
			t.warnf("%v", err)
		}
		return fmt.Errorf("pid %d: %w", tg.pid, ErrPidExited)
	}
	t.traceFiltered(tg.pid)
	return nil
}
