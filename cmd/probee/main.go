// Command probee traces who calls a function, and how much: it attaches eBPF
// programs to user functions (uprobes), kernel functions (kprobes) and
// tracepoints, captures a user + kernel stack at every event, and writes
// collapsed stacks and flamegraphs per probe.
//
// This package is the command: flags, help, --list-probes, status lines
// and exit codes. The tracing itself is package trace (trace.Run), which
// gets the flags as a trace.Config (traceConfig) and hands its status
// lines and report to statusWriter.
//
// main is a thin shell around run(ctx, args, stdout, stderr) so that every
// code path is reachable from tests; os.Exit is called only here, after
// run's deferred detaches have finished.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/probee/probee/trace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	trace.StopCPUProfile()
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries an exit code chosen by run (e.g. no match: 1).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// commandExit passes on the exit status of a traced command that ended by
// itself with a non-zero status (issue 20): probee succeeded, and exits as
// the command did, like perf record -- CMD. The status line has said how
// it ended, so nothing more is printed.
type commandExit struct{ code int }

func (e *commandExit) Error() string { return fmt.Sprintf("command exit status %d", e.code) }

// exitCode prints err (if any) and maps it to probee's exit codes: 0 ok,
// 1 runtime failure, 2 usage or spec error, or the traced command's status
// (commandExit) when probee itself succeeded.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ce *commandExit
	if errors.As(err, &ce) {
		return ce.code
	}
	printError(stderr, err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// printError prints err as "probee: ..." lines, one for each of the
// errors joined in it (every output that failed).
func printError(stderr io.Writer, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printError(stderr, e)
		}
		return
	}
	fmt.Fprintf(stderr, "probee: %v\n", err)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	if cfg.help {
		fmt.Fprint(stdout, helpText)
		return nil
	}
	if cfg.list {
		return listProbes(cfg, stdout, stderr)
	}
	res, err := trace.Run(ctx, cfg.traceConfig(stdout, newStatus(stderr, cfg.quiet, cfg.verbose)))
	if err == nil && res.CommandExit != 0 {
		return &commandExit{res.CommandExit}
	}
	return err
}
