// Package trace is probee's pipeline: from a validated Config to a
// profile and its report. Run takes the steps one function each:
// resolve every probe's spec to targets (probespec, resolver; with
// --latency and ret: probes, their return targets), open the kernel
// session (bpf) with the process tracker (proctrack) wired to its
// notices and mapping records, start the command held at its exec (or
// hold the -p process by a pidfd), attach the probes, run until the
// context ends, -d passes or the traced process exits, drain the
// kernel's maps (every --interval, and early when one is half full),
// merge the processes gone during the run and push interval profiles
// (--push), and finish: drain, symbolize, report and write the outputs
// (output).
//
// It owns no flags, help text, exit codes or stderr: cmd/probee turns
// the command line into a Config, prints the status lines Run hands to
// Config.Status, and maps Run's errors (UsageError: a Config that cannot
// work) and the traced command's status (Result.CommandExit) to exit
// codes. The traced command itself shares probee's stdin, stdout and
// stderr.
//
// Hidden environment variables for tests and benchmarks are read here:
// PROBEE_COMPAT (older kernels' fallbacks), PROBEE_MERGE_GONE=0,
// PROBEE_NO_FIND_VMA, PROBEE_NO_DEFER, PROBEE_CPUPROFILE and
// PROBEE_HEAPPROFILE (profiles of probee's own run).
package trace
