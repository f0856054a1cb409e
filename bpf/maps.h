// The maps and load-time settings of counting, of the process filter, of
// the notices to user space and of the stop gates. The DWARF walk's are in
// unwind_maps.h, those of --latency and --weight in latency_maps.h.
#ifndef PROBEE_MAPS_H
#define PROBEE_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"

// Set by the loader before load (rodata).
const volatile __u32 filter_pids = 0;  // 1: only tgids in the pids map
const volatile __u32 sample_probe = 0; // --sample: the probe id samples are counted under
const volatile __u32 include_idle = 0; // --sample: 1 keeps samples of the idle task
const volatile __u32 self_tgid = 0;    // without filter_pids: a tgid left out (probee's own)

// Per-CPU slots of the maps that hold an event's work in progress (the
// user registers, the walk state, a deferred stack, a pending measure):
// one per context kind, as a perf sample can interrupt a uprobe's walk.
enum unwind_slot {
	SLOT_UPROBE = 0,
	SLOT_UPROBE_MULTI = 1,
	SLOT_KPROBE = 2,
	SLOT_TRACEPOINT = 3,
	SLOT_PERF = 4,
	SLOT_OFFCPU = 5,
	SLOT_WAKER = 6,
	SLOT_MAX = 7,
};

// Counts are double-buffered for periodic drains (--interval): events go to
// counts0 or counts1 as counts_gate.active says; user space flips it, waits
// until no event uses the other map (counts_gate.slots[*].busy), then
// drains and clears it. Allocated on demand (no preallocation).
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, __u64);
};
struct counts_map counts0 SEC(".maps");
struct counts_map counts1 SEC(".maps");

// The counts gate (probee.h), memory-mapped by user space.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct counts_gate);
} counts_gate SEC(".maps");

// User stacks by depth class (enum ustack_class).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ustack_short);
} ustacks_short SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ustack_mid);
} ustacks_mid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct user_stack);
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kernel_stack);
} kstacks SEC(".maps");

// tgids to trace when filter_pids is set; children are added at fork.
// The value is PID_TRACED, with PID_ANNOUNCED once the tgid is in seen
// and PID_EXITED once its last thread began to exit (enum pid_flag).
// Its own exiting threads still pass the filter (exit_mm, unmapping its
// memory, comes after the exit tracepoint on kernels from 6.16: those
// samples are [exiting]); a process that takes the pid later does not,
// until its entry goes with the task (probee_free) or a traced parent
// forks it.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

// tgids already announced to user space (which snapshots their mappings).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

// Scratch space for one user stack, per CPU (too big for the BPF stack).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct user_stack);
} scratch SEC(".maps");

// Scratch space for one kernel stack, per CPU.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kernel_stack);
} kscratch SEC(".maps");

// The user registers kernel-context programs copy for an event (kprobes,
// tracepoints, samples in kernel mode), per CPU and context kind like
// unwind_states: in a map, as the BPF stack (512 bytes) is shared by all the
// calls of a program, the walk's included (bpf/stack_test.go).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct pt_regs);
} regs_scratch SEC(".maps");

// The stop gates (stopgate.h). ld.so gate: processes between an RT_ADD and
// the RT_CONSISTENT after it.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} ldso_adding SEC(".maps");

// The processes a gate stopped and user space has not resumed yet, with
// the start time (start_boottime, ns) of each: user space deletes a key
// once it has sent the stop's SIGCONT (bpf/holds.go). probee's watchdog,
// a process that holds this map, resumes whatever is left in it when
// probee dies in any way (a SIGKILL, a SIGPIPE, a crash), so that a dead
// probee leaves nothing stopped; the start time keeps it from signaling a
// process that took the pid of one that exited. No room, no stop.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hold_key);
	__type(value, __u64);
} holds SEC(".maps");

// probee's root directory (device, inode), set by user space with the
// root gate.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_key);
} host_root SEC(".maps");

#endif
