// probee's maps and load-time settings, shared by the capture programs
// (probee.bpf.c), the unwinder (unwind.h) and the kprobe programs (kprobe.h).
// Included once, from probee.bpf.c.
#ifndef PROBEE_MAPS_H
#define PROBEE_MAPS_H

// Set by the loader before load (rodata).
const volatile __u32 filter_pids = 0; // 1: only tgids in the pids map

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

// note_added counts a key added to a map of kind (enum added_kind) in this
// CPU's gate slot.
static __always_inline void note_added(__u32 kind)
{
	__u32 zero = 0;
	struct counts_gate *g = bpf_map_lookup_elem(&counts_gate, &zero);

	if (g)
		__sync_fetch_and_add(&g->slots[bpf_get_smp_processor_id() & (COUNTS_SLOTS - 1)].added[kind < ADDED_KINDS ? kind : 0], 1);
}

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

// Force the event struct into BTF for bpf2go -type.
const struct event *unused_event __attribute__((unused));
const struct hold_key *unused_hold_key __attribute__((unused));

#endif
