// Package proctrack owns the lifecycle of the processes probee traces:
// which processes and files need unwind tables and symbol snapshots, and
// when.
//
// Its inputs are the targets (TracePidfd for -p, held by a pidfd so that
// its pid, once the process exited, names nothing probee traces: Pidfd;
// TracePID for -- CMD stopped right after its exec)
// and the kernel's records, handed over as they arrive: process notices
// (a new process and its parent, a gate stop, an exit: OnProcessEvent) and
// mapping records (a fork, an exec, a new executable mapping: OnMmap, in
// the order they happened). From them
// it decides:
//
//   - when a process's unwind tables are (re)loaded: once when it is first
//     seen, at each gate stop (then it is resumed), and after it maps new
//     code, the mapping records of one process coalesced into one reload
//     (reloadDelay) that re-reads /proc/PID/maps rather than patching the
//     list from records that arrive up to 60 ms late;
//   - which gate holds the traced command until the tables of the
//     libraries ld.so mapped are loaded (the ld.so gate; its program's and
//     ld.so's are loaded before its first instruction), and the -p process
//     and the command at each dlopen;
//   - system-wide, which files get a table by file identity (the first
//     mapping of each file on the machine, when the path still names the
//     mapped inode), so a process probee never registered is unwound too;
//   - by which path a process's files are opened (procmaps.File: the path
//     its maps show when it names the mapped file, else through
//     /proc/PID/root or /proc/PID/map_files, as in a container), and that
//     Go binaries get no table under --unwind auto;
//   - how the stacks the kernel handed over unfinished (a walk that
//     reached a file whose table was not loaded yet: OnDeferred) are
//     finished: with the file's table, the mappings of the image that
//     ran the stack as /proc and the mapping records reported them (told
//     apart by comm and by the stack's pcs; its parent's for a child
//     forked before its first event, as they were before the parent's
//     own exec) and the stack copy, then counted
//     (Kernel.AddStack); FinishDeferred finishes the rest at the end;
//   - each process's mapping history (History, history.go, records.go,
//     generations.go): the mapping sets of the images it ran, each with
//     the objects of the files it maps (objfile, read while the process
//     lives: a container's root is gone with it) and, for the image it
//     runs, its perf map (internal/perfmap). One /proc/PID/maps read
//     serves the snapshot and the tables, a fork record copies the
//     parent's set to the child (a process notice does too, for a child
//     whose record is not handled yet), an exec starts a new set and keeps
//     the old one under the comm it ran with, exited processes that never
//     produced an event are pruned, and the objects of files no known
//     process maps are let go (prune.go). The symbolizer reads it
//     (ImageOf: the image that ran a stack) and so does the deferred-stack
//     finisher (Mappings): nothing is pushed to the symbolizer;
//   - with --group-by container, which container (cgroup) each process
//     that produced an event runs in, kept after it exits (containers.go).
//
// It does not touch the kernel: every load, gate, filter entry and resume
// goes through the Kernel interface (*bpf.Session implements it), and the
// notices, records and stacks it takes are the types of the leaf package
// bpf/wire, so it does not import bpf. It does
// not build tables (unwind.Cache does) or name frames (package symbolize
// does, from the History). It prints nothing: warnings and
// progress go to the Warnf and Debugf callbacks, and cmd/probee turns them
// into status lines. It reads /proc and the traced files under
// Config.Root, so its tests run on a fake /proc with a fake kernel side
// that records the calls.
//
// OnProcessEvent and OnMmap are called from different goroutines (the
// notice and the mapping readers); table loads are serialized so that the
// last load pushed is the freshest /proc read.
package proctrack
