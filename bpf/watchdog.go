package bpf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// The watchdog resumes what the gates stopped when probee dies without
// resuming it: a SIGKILL, a SIGPIPE on a closed stdout, a crash. It is
// probee itself, started again with WatchdogArg as its only argument, in
// its own process group (a terminal's Ctrl-C goes to probee's group
// only), with every terminal signal ignored and /dev/null as its
// standard files. It inherits the holds map, a pidfd of probee and the
// read end of a pipe only probee writes to, tells probee it is ready
// (then it runs no code until probee ends: its start-up is over before
// the probes are attached, so it is in no profile) and waits:
//
//   - a byte on the pipe: probee ended normally and resumed the holds
//     itself (Session.Close): the watchdog exits;
//   - probee's pidfd readable (the pipe's end of file comes earlier, as
//     probee's files close): probee is gone, and with its files every
//     gate, so no new stop can come; the watchdog resumes every process
//     still in the holds map (resume checks each one's start time) and
//     exits.
//
// A process waiting for another's death could also be a BPF program on
// probee's own exit, but signaling another task from BPF needs
// bpf_send_signal_task (6.13), and probee's gates are detached only
// after that program would run.

// WatchdogArg, as probee's only argument, runs it as the watchdog
// (RunWatchdog); cmd/probee dispatches on it before parsing flags.
const WatchdogArg = "__probee_watchdog__"

// The watchdog's inherited files.
const (
	watchHolds  = 3 // the holds map
	watchParent = 4 // a pidfd of probee
	watchQuit   = 5 // read end of probee's pipe
	watchReady  = 6 // write end: one byte once it is waiting
)

// watchdogReady is how long probee waits for the watchdog to start.
const watchdogReady = 5 * time.Second

type watchdog struct {
	cmd  *exec.Cmd
	quit *os.File // probee's end of the pipe
}

// StartWatchdog starts the watchdog of this session's stops (see above)
// and waits until it is ready.
func (s *Session) StartWatchdog() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start the watchdog: %w", err)
	}
	files, err := watchdogFiles(s.objs.Holds)
	if err != nil {
		return fmt.Errorf("start the watchdog: %w", err)
	}
	defer closeFiles(files[:3]) // the child's; probee keeps the pipe's write end
	quitW := files[3]
	ready, readyW, err := os.Pipe()
	if err != nil {
		quitW.Close()
		return fmt.Errorf("start the watchdog: %w", err)
	}
	defer ready.Close()
	cmd := &exec.Cmd{Path: exe, Args: []string{"probee", WatchdogArg},
		ExtraFiles:  []*os.File{files[0], files[1], files[2], readyW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		quitW.Close()
		return fmt.Errorf("start the watchdog: %w", err)
	}
	s.watch = &watchdog{cmd: cmd, quit: quitW}
	ready.SetReadDeadline(time.Now().Add(watchdogReady))
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		s.watch.stop()
		s.watch = nil
		return fmt.Errorf("start the watchdog: it did not start: %w", err)
	}
	return nil
}

// watchdogFiles are the watchdog's holds map, probee's pidfd, and the
// pipe's read and write ends.
func watchdogFiles(holds *ebpf.Map) ([]*os.File, error) {
	mfd, err := unix.FcntlInt(uintptr(holds.FD()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	pfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		unix.Close(mfd)
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(mfd)
		unix.Close(pfd)
		return nil, err
	}
	return []*os.File{os.NewFile(uintptr(mfd), "holds"), os.NewFile(uintptr(pfd), "pidfd"), r, w}, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// stop tells the watchdog that probee resumed the holds itself, and
// waits for it to exit.
func (w *watchdog) stop() {
	w.quit.Write([]byte{1})
	w.quit.Close()
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		w.cmd.Process.Kill()
		<-done
	}
}

// RunWatchdog is the watchdog's main (see above); it returns its exit
// code. Nothing is written anywhere.
func RunWatchdog() int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	holds, err := ebpf.NewMapFromFD(watchHolds)
	if err != nil {
		return 1
	}
	defer holds.Close()
	ready := os.NewFile(watchReady, "ready")
	ready.Write([]byte{1})
	ready.Close()
	if quitByte() {
		return 0
	}
	pollIn(watchParent) // gone, with its gates
	resumeHolds(holds)
	return 0
}

// quitByte waits for probee's pipe or its end, and reports whether
// probee wrote the byte that says it ended normally.
func quitByte() bool {
	fds := []unix.PollFd{{Fd: watchParent, Events: unix.POLLIN}, {Fd: watchQuit, Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
	if fds[1].Revents == 0 {
		return false
	}
	n, _ := unix.Read(watchQuit, make([]byte, 1))
	return n == 1
}

// pollIn waits until fd is readable (or polling it fails).
func pollIn(fd int) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
