package bpf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
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
// standard files. It inherits the holds map, a pidfd of probee and one
// end of a socket whose other end only probee holds, tells probee it is
// ready (then it runs no code until probee ends or writes: its start-up
// is over before the probes are attached, so it is in no profile) and
// waits:
//
//   - msgQuit on the socket: probee ended normally and resumed the holds
//     itself (Session.Close): the watchdog exits;
//   - msgLinks with link fds (HandOff): the watchdog keeps them, so that
//     probee can exit without waiting for their detach;
//   - probee's pidfd readable (the socket's end of file comes earlier, as
//     probee's files close): probee is gone, and with its files every
//     gate it did not hand over. The watchdog resumes every process
//     still in the holds map (resume checks each one's start time),
//     closes the links it was handed, resumes again what their gates
//     stopped meanwhile, and exits.
//
// A process waiting for another's death could also be a BPF program on
// probee's own exit, but signaling another task from BPF needs
// bpf_send_signal_task (6.13), and probee's gates are detached only
// after that program would run.

// WatchdogArg, as probee's only argument, runs it as the watchdog
// (runWatchdog), from this package's init: every binary that can open a
// Session can be its watchdog, test binaries too. A test binary started
// again without it ran its whole suite instead, whose sessions started
// more of them: a run of cmd/probee's tests left ~100 test binaries
// running for minutes (a load of 20 on 2 cores), commands of theirs
// stopped, and each in-process trace waited 5 s (watchdogReady) for a
// watchdog that never said it was ready.
const WatchdogArg = "__probee_watchdog__"

func init() {
	if len(os.Args) == 2 && os.Args[1] == WatchdogArg {
		os.Exit(runWatchdog())
	}
}

// The watchdog's inherited files.
const (
	watchHolds  = 3 // the holds map
	watchParent = 4 // a pidfd of probee
	watchSock   = 5 // the watchdog's end of the socket
	watchReady  = 6 // write end: one byte once it is waiting
)

// watchdogReady is how long probee waits for the watchdog to start.
const watchdogReady = 5 * time.Second

type watchdog struct {
	cmd  *exec.Cmd
	sock *os.File // probee's end of the socket
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
	defer closeFiles(files[:3]) // the child's; probee keeps its end of the socket
	quitW := files[3]           // probee's end of the socket
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
	s.watch = &watchdog{cmd: cmd, sock: quitW}
	ready.SetReadDeadline(time.Now().Add(watchdogReady))
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		s.watch.stop()
		s.watch = nil
		return fmt.Errorf("start the watchdog: it did not start: %w", err)
	}
	return nil
}

// watchdogFiles are the watchdog's holds map, probee's pidfd, and the
// two ends of the socket between them (the watchdog's, probee's).
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
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(mfd)
		unix.Close(pfd)
		return nil, err
	}
	return []*os.File{os.NewFile(uintptr(mfd), "holds"), os.NewFile(uintptr(pfd), "pidfd"),
		os.NewFile(uintptr(sp[0]), "watchdog socket"), os.NewFile(uintptr(sp[1]), "watchdog socket")}, nil
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
	w.sock.Write([]byte{msgQuit})
	w.sock.Close()
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		w.cmd.Process.Kill()
		<-done
	}
}

// The messages on the watchdog's socket (one byte each).
const (
	msgQuit  = 'q' // probee resumed the holds itself: exit
	msgLinks = 'l' // with link fds (SCM_RIGHTS): close them once probee is gone
)

// runWatchdog is the watchdog's main (see above); it returns its exit
// code. Nothing is written anywhere.
func runWatchdog() int {
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
	links, quit := receive()
	if quit {
		return 0
	}
	pollIn(watchParent) // gone, with its gates
	resumeHolds(holds)
	closeFDs(links)
	resumeHolds(holds)
	return 0
}

// closeFDs closes fds, detachers at once (closeLinks).
func closeFDs(fds []int) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(detachers, len(fds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for fd := range next {
				unix.Close(fd)
			}
		}()
	}
	for _, fd := range fds {
		next <- fd
	}
	close(next)
	wg.Wait()
}

// receive reads probee's messages until msgQuit (quit), the socket's
// end or probee's end; it returns the link fds it was handed.
func receive() (links []int, quit bool) {
	fds := []unix.PollFd{{Fd: watchParent, Events: unix.POLLIN}, {Fd: watchSock, Events: unix.POLLIN}}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*maxHandOff))
	for {
		if _, err := unix.Poll(fds, -1); errors.Is(err, unix.EINTR) {
			continue
		} else if err != nil || fds[1].Revents == 0 {
			return links, false
		}
		n, oobn, _, _, err := unix.Recvmsg(watchSock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil || n == 0 {
			return links, false
		}
		if buf[0] == msgQuit {
			return links, true
		}
		links = append(links, rightsOf(oob[:oobn])...)
	}
}

// rightsOf is the fds of a message's SCM_RIGHTS.
func rightsOf(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if r, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
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
