// Off-CPU time (--off-cpu): how long threads wait, per stack at the
// switch-out, from the sched_switch tracepoint alone (tp_btf: no kprobe,
// no tracefs). At a switch the program first ends the wait of the thread
// that comes in (offcpu_resume), then walks the stacks of the thread that
// leaves like any event (record.h, state slot SLOT_OFFCPU, its own step
// program) and parks them with the time in offcpu_starts (offcpu_park,
// from count_event). The stacks are taken at the switch-out because only
// then is the leaving thread current: its user memory is the one
// bpf_probe_read_user reads. A wait from min_block to max_block adds its
// nanoseconds to its stacks' measure under probe id offcpu_probe + state;
// every wait goes to that probe's histogram. User space keeps the stacks
// a parked wait names (bpf/offcpu.go) and closes the waits still open when
// tracing ends.
//
// --wakers: the sched_waking program runs in the waker's context when a
// thread with an open wait is woken (try_to_wake_up, before the wakee can
// run). It walks the waker's stacks in SLOT_WAKER (a waker outside the
// traced processes: its kernel stack alone) and joins them to the wait
// (offcpu_wake): the wait's kernel stack hash becomes the join's, which
// user space resolves (bpf/wakers.go). A preempted thread is not woken:
// its waits have no waker.
#ifndef PROBEE_OFFCPU_H
#define PROBEE_OFFCPU_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "counters.h"
#include "latency_maps.h"
#include "measure.h"
#include "compat.h"
#include "stackstore.h"

// Task states (include/linux/sched.h), as sched_switch sees prev's.
#define TASK_INTERRUPTIBLE_BIT 0x0001
#define TASK_UNINTERRUPTIBLE_BIT 0x0002
#define TASK_STOPPED_BIT 0x0004 // __TASK_STOPPED
#define TASK_TRACED_BIT 0x0008  // __TASK_TRACED
#define TASK_DEAD_BIT 0x0080
#define TASK_NOLOAD_BIT 0x0400 // with UNINTERRUPTIBLE: TASK_IDLE, an idle kernel thread

// The task state field: __state since 5.14, state before.
struct task_struct___state_new { unsigned int __state; } __attribute__((preserve_access_index));
struct task_struct___state_old { long state; } __attribute__((preserve_access_index));

static __always_inline __u32 task_state(void *t)
{
	if (bpf_core_field_exists(((struct task_struct___state_new *)t)->__state))
		return BPF_CORE_READ((struct task_struct___state_new *)t, __state);
	return BPF_CORE_READ((struct task_struct___state_old *)t, state);
}

// offcpu_state_of is the enum offcpu_state of a thread leaving the CPU
// in task state s (task_state), or OFFCPU_STATES for its last switch (it
// exits: no wait follows). A global function: the caller gets one value
// it does not know, where four constants would each walk the stack on a
// path of their own (5.10 gave up on probee_offcpu at a million
// instructions).
__attribute__((noinline)) int offcpu_state_of(int preempt, __u32 s)
{
	if (preempt)
		return OFFCPU_PREEMPTED; // whatever state it was about to sleep in
	if (s & TASK_DEAD_BIT)
		return OFFCPU_STATES;
	if (s & (TASK_STOPPED_BIT | TASK_TRACED_BIT))
		return OFFCPU_STOPPED;
	if ((s & TASK_UNINTERRUPTIBLE_BIT) && !(s & TASK_NOLOAD_BIT))
		return OFFCPU_UNINTERRUPTIBLE;
	return s ? OFFCPU_SLEEP : OFFCPU_PREEMPTED; // running: it yielded
}

// A thread's entry in offcpu_starts stays from its first wait to its exit
// (probee_exit): a wait ended sets its start to 0, and the next one is
// written in place, where adding and deleting the entry at each wait cost
// an allocation and a free per context switch.

// offcpu_park notes the switch-out of the current thread, whose stacks k
// names.
static __always_inline void offcpu_park(struct count_key *k)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start *p = bpf_map_lookup_elem(&offcpu_starts, &tid);

	if (p) {
		p->key = *k;
		p->start = now;
		return;
	}
	struct offcpu_start v = {.key = *k, .start = now};
	if (bpf_map_update_elem(&offcpu_starts, &tid, &v, BPF_ANY))
		count_drop(DROP_OFFCPU_FULL);
}

// offcpu_waiting is thread tid's open wait, NULL when it has none.
static __always_inline struct offcpu_start *offcpu_waiting(__u32 *tid)
{
	struct offcpu_start *v = bpf_map_lookup_elem(&offcpu_starts, tid);
	return v && v->start ? v : NULL;
}

// offcpu_resume ends the wait of thread tid, which runs again at now. A
// global function (its arguments are scalars, which 5.10 takes too): the
// verifier checks it once, not on each path of the walk after it (5.10
// gave up on probee_offcpu at a million instructions with it inlined).
__attribute__((noinline)) int offcpu_resume(__u32 tid, __u64 now)
{
	struct offcpu_start *v = offcpu_waiting(&tid);
	if (!v)
		return 0;
	struct count_key k = v->key;
	__u64 d = now - v->start;
	v->start = 0;
	probe_add(k.probe, d);
	if (d >= min_block && d <= max_block)
		add_measure(&k, d);
	return 0;
}

// join_hash names a join: a mix of its fields, never 0.
static __always_inline __u64 join_hash(struct wake_join *j)
{
	const __u64 m = 0x9e3779b97f4a7c15ULL;
	__u64 c0, c1;
	__builtin_memcpy(&c0, j->comm, 8);
	__builtin_memcpy(&c1, j->comm + 8, 8);
	__u64 h = (j->blocked ^ 0x6a6f696e) * m;
	h = (h ^ j->ustack) * m;
	h = (h ^ j->kstack) * m;
	h = (h ^ j->tgid ^ c0) * m;
	h = (h ^ c1) * m;
	h ^= h >> 29;
	return h ? h : 1;
}

// offcpu_wake joins the stacks k names, the waker's, to the open wait of
// the thread it wakes (offcpu_wakee), and ends the walk.
static __always_inline void offcpu_wake(struct count_key *k)
{
	__u32 zero = 0;
	struct waker_walk *w = bpf_map_lookup_elem(&offcpu_wakee, &zero);
	if (!w)
		return;
	w->since = 0;
	struct offcpu_start *v = offcpu_waiting(&w->tid);
	if (!v)
		return; // it ran already
	struct wake_join j = {.blocked = v->key.kstack, .ustack = k->ustack, .kstack = k->kstack, .tgid = k->tgid};
	__builtin_memcpy(j.comm, k->comm, sizeof(j.comm));
	__u64 h = join_hash(&j);
	if (bpf_map_update_elem(&wake_joins, &h, &j, BPF_ANY)) {
		count_drop(DROP_WAKERS_FULL);
		return;
	}
	v->key.kstack = h;
}

// offcpu_wake_kernel joins the waker's kernel stack alone to the wait of
// the thread w->tid: a waker outside the traced processes, or one that
// interrupted the walk of another (since: its start, restored after).
static __always_inline void offcpu_wake_kernel(void *ctx, struct waker_walk *w, __u64 since)
{
	struct count_key k = {.tgid = bpf_get_current_pid_tgid() >> 32};

	k.kstack = store_kernel_stack(ctx);
	task_comm(k.comm);
	offcpu_wake(&k);
	w->since = since;
}

// WAKER_WALK_STALE is how long a waker's walk may run: one begun earlier
// (on this CPU, in this program) ended without joining (an event
// filtered, a failed read).
#define WAKER_WALK_STALE 1000000ULL // 1 ms

#endif
