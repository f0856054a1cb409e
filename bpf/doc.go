// Package bpf owns everything in probee that touches the kernel: the BPF C
// sources (probee.bpf.c, probee.h) and their committed bpf2go output, loading,
// attaching (uprobe, uretprobe, uprobe_multi, tracepoint), the capture loop
// (ring-buffer notices of new and exiting processes) and draining the
// in-kernel aggregation into plain Go values.
//
// It takes concrete targets (file path + file offset, tracepoint names) from
// the caller and never parses ELF or spec strings itself: that is resolver's
// and probespec's job. It returns raw addresses; symbolization is resolver's.
//
// # Kernel side
//
// Every attach carries a cookie: bits 0-31 are the probe id (the index of the
// spec on the command line), bit 32 says the probe sits on a function's first
// instruction. At such a probe the caller's return address is read from [rsp]
// before the frame-pointer chain is followed, because rbp still belongs to the
// caller: this is the frame every FP-based peer loses at function entry.
//
// Events are counted in the kernel in a hash map keyed by (probe, tgid, comm,
// user stack, kernel stack). User stacks are deduplicated in a hash map keyed
// by a 64-bit hash of their pcs (allocated on demand); kernel stacks use a
// stack-trace map. Every loss is counted per CPU by cause (see DropCause) and
// reported; nothing is dropped silently.
//
// # Attaching
//
// Uprobes on one file are attached with one uprobe_multi link when the kernel
// has it (6.6+). The kernel refuses a whole link if it refuses one address
// (uprobes cannot be placed on some instructions), so a refused link is split
// in halves until the refused addresses are isolated; those are skipped and
// reported, the rest attached. Kernels without uprobe_multi get one perf-event
// link per target.
package bpf
