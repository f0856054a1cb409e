// Command stackcmp compares the stacks probee sampled from one command with
// the stacks `perf record` sampled from the same command, for
// tests/bench/60-real-programs.sh:
//
//	stackcmp compare -name NAME -probee OUT.folded -perf PERF.txt [-perf2 PERF2.txt] [-js] [-event uprobe|once] [-fp-leaf] [-from FRAME] [-verdicts FILE] [-top N]
//	stackcmp summary FILE
//
// compare reads probee's collapsed stacks (`probe;comm;root;...;leaf count`)
// and the text of `perf script -F comm,tid,ip,sym,dso --no-inline` (one
// header line per sample, then one frame per line, leaf first), turns both
// into the same Profile and prints one table: samples, the share of samples
// whose root frame is an outermost frame, mean depth, the share of samples
// without a caller (a walk that failed at its first step), the overlap of
// the caller-chain distributions and, with -js, the share of samples holding a
// named JavaScript frame ("JS:..." from node's perf map). With -event the
// samples are events both tools saw alike rather than timer samples
// (uprobe: a uprobe's hits at a function's entry; once: every event of a
// kind, page faults or a system call, in one execution traced by both at
// once), and the overlap, which then measures unwinding alone, is judged
// under a target of its own. -fp-leaf leaves out the leaf's caller from
// probee's stacks where every sample is in a leaf without a frame (a
// system call wrapper), a caller perf -g never sees. -from FRAME
// compares caller chains from FRAME on (for perf -g, whose frame-pointer
// walk stops in libc); -top N also prints the N chains whose shares differ
// most. With -verdicts it appends one line per target to FILE; summary
// prints, per target, whether every workload met it.
//
// Both sides are compared on physical user-space frames only:
//   - kernel frames (probee's "_[k]", perf's kernel addresses), inline frames
//     (" (inlined)"), probee's "[truncated]", "[exiting]" and "[in execve]"
//     markers and perf's end-of-chain marker
//     (ip ffffffffffffffff) are dropped;
//   - samples of the tools' own launchers before exec (comm "perf-exec";
//     "probee" for probee before it started commands stopped after their
//     exec) are dropped, and so are probee's samples in a task's
//     exit (do_exit), which perf does not sample (and where a process
//     unmapping its memory has no user stack left);
//   - symbol versions ("@@GLIBC_2.34") and "+0x.." offsets are stripped
//     from names;
//   - an unnamed probee frame (module+0xOFF) takes the name perf gave the
//     same module and offset: perf reads /usr/lib/debug, so this compares
//     unwinding rather than symbol sources (ld.so's _start is named only
//     there);
//   - an unnamed root frame that calls __libc_start_main is _start (the
//     entry of a stripped executable), and one that calls _dl_start is
//     ld.so's _start (named only in ld.so's debug file, which perf reads:
//     otherwise the name depends on whether perf sampled that frame too);
//   - every frame still unnamed becomes the token "[unknown]".
//
// A stack reaches the outermost frame when its root is _start,
// _dl_start_user, or a thread entry (start_thread, clone3, clone); in Go,
// _rt0_amd64_linux, runtime.rt0_go, runtime.mstart or runtime.goexit. The
// overlap is the sum, over caller chains (comm and the frames without the
// leaf), of the smaller of the two shares of samples. It also prints the overlap
// over the leaf's 8 innermost callers only (InnerOverlap: what the top of a
// flamegraph shows), which neither depends on where perf's stack copy (64 KiB at most)
// cut a deep stack nor needs as many samples to settle. With -perf2 (a second
// perf run of the command) it also prints both overlaps of the two perf
// runs: deep, varied stacks (a compiler's) make many chains rare, and two
// runs of one tool differ by sampling alone; that figure is the ceiling
// any overlap with perf can reach.
package main
