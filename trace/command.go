package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A traced command is started stopped right after its exec, before its
// first instruction: the child asks to be ptraced (PTRACE_TRACEME) and
// the kernel stops it with SIGTRAP once execve has loaded the program.
// probee then attaches every probe and puts the pid in the in-kernel
// filter, and detaches (release): no event of the command can be missed,
// and nothing but the command itself is traced. Nothing of probee runs in
// the child: an earlier design re-executed probee as a shim that waited on
// a pipe before its exec, and the Go runtime's start-up of that shim
// (about 30 ms of CPU, page faults of a 17 MB binary) was charged to the
// command, showing as extra start-up samples and CPU time
// (process.cpuUsage of node -e 0: 190-215 ms against 110-170 ms plain).
// ptrace is used for this stop only: the command is not traced after the
// release, and its children never are. While held it dies with probee
// (PTRACE_O_EXITKILL: it has not run an instruction, and a dead tracer
// would leave it stopped); released, it runs on if probee dies, and the
// session's watchdog resumes it if a gate stopped it (bpf/watchdog.go).

// tracedCommand is a command started and stopped after its exec.
type tracedCommand struct {
	cmd     *exec.Cmd
	held    bool // stopped, not yet released or aborted
	resume  chan bool
	resumed chan error
	done    chan struct{}
	err     error // Wait's result, valid after done is closed
}

// CheckCommand finds the command's executable, as the exec will, and
// says why one is not: missing, not executable, a directory.
func CheckCommand(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	if strings.Contains(name, "/") {
		if st, serr := os.Stat(name); serr == nil {
			if st.IsDir() {
				return "", usagef("command %q is a directory: give the program to run", name)
			}
			return "", usagef("command %q is not executable (mode %v): chmod +x it, or run it through its interpreter", name, st.Mode().Perm())
		}
		return "", usagef("command %q not found: check its path", name)
	}
	return "", usagef("command %q not found in $PATH: check the name or give its path (e.g. ./%s)", name, name)
}

// commandStdout is where the command writes its standard output: probee's
// own, unless the stacks go there (no -o) and it is not a terminal (a
// pipe to flamegraph.pl, a file): then the command's output would be
// mixed into the stacks (ls's file names among them), and goes to
// stderr instead.
func commandStdout(cfg *Config) *os.File {
	if len(cfg.Outputs) > 0 || cfg.Stdout != io.Writer(os.Stdout) {
		return os.Stdout
	}
	if IsTerminal(os.Stdout) {
		return os.Stdout
	}
	return os.Stderr
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// startPaused starts argv stopped right after its exec, its standard
// output going to stdout.
func startPaused(argv []string, stdout *os.File) (*tracedCommand, error) {
	path, err := CheckCommand(argv[0])
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: argv, SysProcAttr: &syscall.SysProcAttr{Ptrace: true}}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, os.Stderr
	tc := &tracedCommand{cmd: cmd, resume: make(chan bool), resumed: make(chan error, 1), done: make(chan struct{})}
	started := make(chan error, 1)
	go tc.hold(started)
	if err := <-started; err != nil {
		return nil, err
	}
	tc.held = true
	return tc, nil
}

// hold runs on one locked OS thread: ptrace requests are answered only
// to the thread that started the tracee. It starts the command, waits
// for its stop after the exec, and on release detaches from it (or, on
// abort, kills it); then the thread is let go and the command's exit is
// waited for.
func (tc *tracedCommand) hold(started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := tc.cmd.Start(); err != nil {
		started <- startError(tc.cmd.Args[0], err)
		return
	}
	pid := tc.cmd.Process.Pid
	ws, err := waitStop(pid)
	if err != nil {
		started <- fmt.Errorf("start %s: waiting for its stop after exec: %w", tc.cmd.Args[0], err)
		return
	}
	// Held, it dies with probee: it never ran, and a tracer's death
	// would leave it stopped.
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_EXITKILL); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		tc.cmd.Wait()
		started <- fmt.Errorf("start %s: ptrace options: %w", tc.cmd.Args[0], err)
		return
	}
	started <- nil
	kill := <-tc.resume
	if kill {
		syscall.Kill(pid, syscall.SIGKILL)
		tc.resumed <- nil
	} else {
		tc.resumed <- ptraceDetach(pid, ws)
	}
	go func() { tc.err = tc.cmd.Wait(); close(tc.done) }()
}

// waitStop waits for the command's stop after its exec (SIGTRAP). A
// command that exited or was killed first is an error: it was reaped.
func waitStop(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return ws, err
		}
		if !ws.Stopped() {
			return ws, fmt.Errorf("it ended first (wait status %#x)", uint32(ws))
		}
		return ws, nil
	}
}

// ptraceDetach lets the stopped command run, without the SIGTRAP of its
// exec; any other signal it stopped on is delivered.
func ptraceDetach(pid int, ws syscall.WaitStatus) error {
	sig := 0
	if s := ws.StopSignal(); s != syscall.SIGTRAP {
		sig = int(s)
	}
	if _, _, e := syscall.Syscall6(syscall.SYS_PTRACE, syscall.PTRACE_DETACH, uintptr(pid), 0, uintptr(sig), 0, 0); e != 0 {
		return fmt.Errorf("ptrace detach pid %d: %w", pid, e)
	}
	return nil
}

// startError explains why the command could not be started: a program
// the kernel will not execute is a usage error; a denied PTRACE_TRACEME
// (Yama ptrace_scope 3, a seccomp profile) says so.
func startError(name string, err error) error {
	switch {
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("start %s: %w (probee holds a command at its exec with PTRACE_TRACEME: check kernel.yama.ptrace_scope < 3 and that no seccomp profile denies ptrace, or start the program yourself and use -p PID)", name, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		return usagef("cannot run %s: %v: give an executable program or script", name, err)
	}
	return fmt.Errorf("start %s: %w", name, err)
}

func (tc *tracedCommand) pid() int { return tc.cmd.Process.Pid }

// release lets the command run.
func (tc *tracedCommand) release() error {
	tc.held = false
	tc.resume <- false
	return <-tc.resumed
}

// abort kills a command that was never released.
func (tc *tracedCommand) abort() {
	tc.held = false
	tc.resume <- true
	<-tc.resumed
	<-tc.done
}

// running reports whether the command has not exited yet.
func (tc *tracedCommand) running() bool {
	select {
	case <-tc.done:
		return false
	default:
		return true
	}
}

// stop ends the command when tracing stopped before it exited (-d, a
// signal to probee): probee's run owns it, so it is not left behind. It
// first gets grace to exit by itself (a terminal's Ctrl-C reaches it too),
// then SIGTERM, then, grace later, SIGKILL. It returns the signal sent, 0
// when none was needed. Only the command's own process is signaled.
func (tc *tracedCommand) stop(grace time.Duration) syscall.Signal {
	var sent syscall.Signal
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			tc.cmd.Process.Signal(sig)
			sent = sig
		}
		select {
		case <-tc.done:
			return sent
		case <-time.After(grace):
		}
	}
	<-tc.done
	return sent
}

// exitCode is the command's exit status as a shell reports it: the status,
// or 128 + the signal number when a signal killed it (-1 while running, or
// when it could not be waited for).
func (tc *tracedCommand) exitCode() int {
	var ee *exec.ExitError
	switch {
	case tc.running():
		return -1
	case tc.err == nil:
		return 0
	case errors.As(tc.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// status describes how the command ended, for a status line.
func (tc *tracedCommand) status() string {
	var ee *exec.ExitError
	switch {
	case tc.err == nil:
		return "exited with status 0"
	case errors.As(tc.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %v", ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return fmt.Sprintf("failed: %v", tc.err)
}
