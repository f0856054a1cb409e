package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// A traced command is started through an exec shim: probee re-executes
// itself with PROBEE_EXEC_SHIM=1; the shim blocks on a pipe (fd 3) until
// probee has attached every probe and put the shim's pid in the in-kernel
// filter, then execs the command in place (same pid). No event of the
// command can be missed, and nothing runs before tracing starts.
const shimEnv = "PROBEE_EXEC_SHIM"

func isExecShim() bool { return os.Getenv(shimEnv) == "1" }

// execShim says it is ready on fd 4, waits for the go byte on fd 3, then
// execs os.Args[1:]. The ready byte comes after the Go runtime's start-up
// (which reads and opens files): probee puts the pid in the kernel filter
// only then, so none of the shim's own activity is traced.
func execShim() {
	ready := os.NewFile(4, "probee-ready")
	ready.Write([]byte{1})
	ready.Close()
	go3 := os.NewFile(3, "probee-go")
	var b [1]byte
	if n, _ := go3.Read(b[:]); n != 1 {
		os.Exit(127) // probee gave up before releasing the command
	}
	go3.Close()
	os.Unsetenv(shimEnv)
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "probee: %v\n", err)
		os.Exit(127)
	}
	err = syscall.Exec(path, os.Args[1:], os.Environ())
	fmt.Fprintf(os.Stderr, "probee: exec %s: %v\n", path, err)
	os.Exit(126)
}

// tracedCommand is a command started paused under the shim.
type tracedCommand struct {
	cmd  *exec.Cmd
	gate *os.File // write end of the go pipe
	path string   // resolved executable
	done chan struct{}
	err  error // Wait's result, valid after done is closed
}

// startCheck finds the command's executable, as the shim will.
func startCheck(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", usagef("command %q not found: check the name or give its path (e.g. ./%s)", name, name)
	}
	return path, nil
}

// startPaused starts argv under the shim, paused before exec.
func startPaused(argv []string) (*tracedCommand, error) {
	path, err := startCheck(argv[0])
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find probee's own executable for the exec shim: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create exec gate pipe: %w", err)
	}
	defer r.Close()
	rr, rw, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("create exec gate pipe: %w", err)
	}
	defer rr.Close()
	cmd := exec.Command(self, argv...)
	cmd.Env = append(os.Environ(), shimEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, rw}
	err = cmd.Start()
	rw.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	tc := &tracedCommand{cmd: cmd, gate: w, path: path, done: make(chan struct{})}
	go func() { tc.err = cmd.Wait(); close(tc.done) }()
	var b [1]byte
	if n, _ := rr.Read(b[:]); n != 1 { // the shim died before it was ready
		tc.abort()
		return nil, fmt.Errorf("start %s: the exec shim failed: %s", argv[0], tc.status())
	}
	return tc, nil
}

func (tc *tracedCommand) pid() int { return tc.cmd.Process.Pid }

// release lets the command exec and run.
func (tc *tracedCommand) release() error {
	_, err := tc.gate.Write([]byte{1})
	tc.gate.Close()
	return err
}

// abort kills a command that was never released.
func (tc *tracedCommand) abort() {
	tc.gate.Close()
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

// status describes how the command ended, for stderr.
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
