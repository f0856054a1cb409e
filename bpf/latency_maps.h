// The types, settings and maps of --latency and --weight (see latency.h):
// what a stack's measure and a probe's histogram hold, and the stacks of
// calls in flight.
#ifndef PROBEE_LATENCY_MAPS_H
#define PROBEE_LATENCY_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "maps.h"

// Cookie bits (COOKIE_GO, ...), LAT_DEPTH, HIST_BUCKETS, enum
// measure_kind and enum lat_untimed are in probee.h.

// Go's runtime (runtime2.go, stable since Go 1.4): g.stack.lo at 0,
// g.stack.hi at 8, g.sched.pc at 64.
#define G_SCHED_PC 64

// Set by the loader before load (rodata).
const volatile __u32 measure_mode = MEASURE_COUNT;
const volatile __u32 weight_arg = 0;  // MEASURE_WEIGHT: the argument (0-5)
const volatile __u64 min_latency = 0; // MEASURE_LATENCY: shorter calls get no stack
// --off-cpu (offcpu.h): the first of its OFFCPU_STATES probe ids (0: off),
// and the blocks that get a stack: from min_block to max_block ns.
const volatile __u32 offcpu_probe = 0;
const volatile __u64 min_block = 0;
const volatile __u64 max_block = ~0ULL;

// The measure of one stack.
struct measure {
	__u64 calls;
	__u64 total; // nanoseconds, or the sum of the argument
	__u64 max;
};

// Per probe and CPU: every call (also those below min_latency).
struct probe_measure {
	__u64 calls;
	__u64 total;
	__u64 max;
	__u64 stats[LAT_STAT_MAX]; // lat_stat indexes with a mask of 7: hist follows
	__u64 hist[HIST_BUCKETS]; // calls in bucket i: [2^i, 2^(i+1)), bucket 0 also 0
	__u64 hsum[HIST_BUCKETS]; // the sum of their values (for percentiles)
};

enum lat_space { SPACE_THREAD = 0, SPACE_KERNEL = 1, SPACE_GOROUTINE = 2 };

// Whose calls in flight: a thread (id = tid), a task's kernel stack
// (region = sp >> 14), or a goroutine (id = its g).
struct lat_key {
	__u64 id;
	__u64 region;
	__u32 tgid;
	__u32 space;
};

struct lat_frame {
	__u32 probe;
	__u32 pad;
	__u64 ustack;
	__u64 kstack;
	__u64 height;
	__u64 start; // bpf_ktime_get_ns at the entry
};

struct lat_stack {
	__u32 depth;
	__u32 lost; // calls entered past LAT_DEPTH whose returns are still to come
	struct lat_frame f[LAT_DEPTH];
};

// What an entry program found before the stack walk, per CPU and
// context kind (the walk may tail-call; unwind.h).
struct lat_pending {
	struct lat_key key;
	__u64 height;
	__u64 weight;
	__u32 go;
	__u32 restart; // a Go function's entry run again (go_restart)
};

struct measures_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, struct measure);
};
struct measures_map measures0 SEC(".maps");
struct measures_map measures1 SEC(".maps");

// max_entries: the number of probes (set by the loader).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_measure);
} probe_measures SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct lat_key);
	__type(value, struct lat_stack);
} lat_stacks SEC(".maps");

// An empty lat_stack to insert from (too big for the BPF stack).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lat_stack);
} lat_empty SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct lat_pending);
} lat_pendings SEC(".maps");

// --off-cpu: each thread's last switch-out with its stacks, by thread id,
// until it runs again (offcpu.h). Sized by user space (the threads that
// can be off CPU at once); what is left at the end is closed there.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} offcpu_starts SEC(".maps");

// --wakers: the joins of waits and the stacks of their wakers, by hash
// (offcpu.h); taken by user space like the stack maps, sized by it.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct wake_join);
} wake_joins SEC(".maps");

// --wakers: the walk of a waker in progress on this CPU (offcpu.h).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct waker_walk);
} offcpu_wakee SEC(".maps");

#define KSTACK_REGION_SHIFT 14 // 16 KiB: x86-64 task and irq stacks are aligned to it

#endif
