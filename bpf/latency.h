// "How much": time and weights per calling stack (--latency, --weight).
//
// In the count mode (the default) every event is counted in counts0/1. In
// the measure modes the function probes (uprobe and kprobe entries) go to
// measures0/1 instead, keyed by the same count_key, with calls, a total
// and a maximum per stack, and each probe has a log2 histogram
// (probe_measures):
//   - MEASURE_WEIGHT: the total is the sum of one integer argument
//     (weight_arg) read at the function's entry;
//   - MEASURE_LATENCY: the entry pushes (probe, stacks, entry time, frame
//     height) on the thread's (or goroutine's) stack of calls in flight
//     (lat_stacks); the return program pops it and adds the duration,
//     when at least min_latency, to the entry stack's measure.
//
// Pairing. A call's frame is told apart by its height: how deep its
// return address lies in its stack (-sp, or for a goroutine g.stack.hi -
// sp, which Go's stack copying keeps). An entry first drops the frames in
// flight at its height or deeper (calls that never returned: longjmp, an
// exception, a panic); a return drops the deeper ones, then takes the
// frame of its probe at its height. Every dropped frame is counted per
// probe (LAT_UNWOUND), as is a return without its entry (LAT_UNMATCHED),
// an entry past LAT_DEPTH frames (LAT_TOO_DEEP), a thread that exits with
// calls in flight (LAT_EXITED) and a stack that found no room in
// lat_stacks (LAT_NO_ROOM). Stacks are keyed per thread; Go functions
// (COOKIE_GO) are keyed per goroutine (r14 holds g under ABIInternal,
// g.stack bounds the stack), because goroutines move between threads; a
// kernel function per task and kernel stack (a function entered in an
// interrupt on the irq stack is another stack).
#ifndef PROBEE_LATENCY_H
#define PROBEE_LATENCY_H

#include <linux/types.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "maps.h"
#include "latency_maps.h"
#include "measure.h"
#include "procs.h"

// ctx_reg reads a register of r. The barrier keeps each read at its
// constant offset: the verifier refuses a ctx access at a computed
// offset, which the compiler makes of a switch over registers.
#define ctx_reg(r, name)                               \
	({                                             \
		__u64 v_ = (r)->name;                  \
		asm volatile("" : "+r"(v_)::"memory"); \
		v_;                                    \
	})

// func_arg reads integer argument n (0-5) of the function whose entry
// regs are: System V for C and the kernel, ABIInternal for Go.
static __always_inline __u64 func_arg(struct pt_regs *r, __u32 n, int go)
{
	switch (n) {
	case 0: return go ? ctx_reg(r, rax) : ctx_reg(r, rdi);
	case 1: return go ? ctx_reg(r, rbx) : ctx_reg(r, rsi);
	case 2: return go ? ctx_reg(r, rcx) : ctx_reg(r, rdx);
	case 3: return go ? ctx_reg(r, rdi) : ctx_reg(r, rcx);
	case 4: return go ? ctx_reg(r, rsi) : ctx_reg(r, r8);
	default: return go ? ctx_reg(r, r8) : ctx_reg(r, r9);
	}
}

// call_frame finds whose stack a call is on and its frame's height from
// the registers at its entry or return; entry_sp is rsp at the entry
// (where the return address is).
static __always_inline void call_frame(struct pt_regs *r, __u64 entry_sp, int kernel, int go,
				       struct lat_key *k, __u64 *height)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 bounds[2] = {}; // g.stack.lo, g.stack.hi

	k->tgid = id >> 32;
	k->id = (__u32)id;
	k->region = 0;
	k->space = SPACE_THREAD;
	*height = -entry_sp;
	if (kernel) {
		k->space = SPACE_KERNEL;
		k->region = entry_sp >> KSTACK_REGION_SHIFT;
		return;
	}
	if (!go || !r->r14 || bpf_probe_read_user(bounds, sizeof(bounds), (void *)r->r14))
		return;
	if (entry_sp < bounds[0] || entry_sp >= bounds[1])
		return; // r14 is not g here (assembly, cgo): keyed by thread
	k->space = SPACE_GOROUTINE;
	k->id = r->r14;
	*height = bounds[1] - entry_sp;
}

// go_restart reports whether a Go function's entry runs again for the
// same call: its prologue called morestack, to grow the stack or to be
// preempted, and the runtime resumed the goroutine at the function's
// start (gogo to g.sched.pc, which morestack set to the function's own
// CALL site and which stays there until the goroutine next parks,
// panics or is preempted elsewhere).
static __always_inline int go_restart(struct pt_regs *r, __u64 cookie)
{
	__u64 size = cookie >> COOKIE_SIZE_SHIFT, pc = 0;

	if (!size || bpf_probe_read_user(&pc, sizeof(pc), (void *)(r->r14 + G_SCHED_PC)))
		return 0;
	return pc - r->rip < size;
}

// lat_prepare runs in an entry program before the stack walk: it notes
// the argument or the call's frame in the slot's pending record.
static __always_inline void lat_prepare(void *ctx, __u64 cookie, __u32 slot)
{
	if (!measured_slot(slot))
		return;
	struct pt_regs *r = ctx;
	struct lat_pending *p = bpf_map_lookup_elem(&lat_pendings, &slot);
	if (!p)
		return;
	p->go = (cookie >> 32) & COOKIE_GO ? 1 : 0;
	if (measure_mode == MEASURE_WEIGHT) {
		p->weight = func_arg(r, weight_arg, p->go);
		return;
	}
	call_frame(r, r->rsp, slot == SLOT_KPROBE, p->go, &p->key, &p->height);
	p->restart = p->go && go_restart(r, cookie);
}

// UNROLLED_PAIRING unrolls the loops that pair calls over the stack of
// calls in flight. As loops, 6.1's verifier could not prune their paths
// (states inside a loop being explored are not used for pruning) and gave
// up on lat_push after a million instructions; unrolled, they are about
// 1,300 instructions each, verified once per program (global functions).
#define UNROLLED_PAIRING _Pragma("unroll")

// frame_at is &st->f[i mod LAT_DEPTH], masked where the verifier sees
// it (the compiler drops a mask it can prove useless).
static __always_inline struct lat_frame *frame_at(struct lat_stack *st, __u32 i)
{
	asm volatile("" : "+r"(i));
	return &st->f[i & (LAT_DEPTH - 1)];
}

// lat_open returns key's stack of calls in flight, created when create.
static __always_inline struct lat_stack *lat_open(struct lat_key *key, int create, __u32 probe)
{
	struct lat_stack *st = bpf_map_lookup_elem(&lat_stacks, key);
	if (st || !create)
		return st;
	__u32 zero = 0;
	struct lat_stack *empty = bpf_map_lookup_elem(&lat_empty, &zero);
	if (!empty)
		return NULL;
	long err = bpf_map_update_elem(&lat_stacks, key, empty, BPF_NOEXIST);
	if (err && err != -17) {
		lat_stat(probe, LAT_NO_ROOM);
		return NULL;
	}
	return bpf_map_lookup_elem(&lat_stacks, key);
}

// lat_push records the entry of a call whose stacks k names (a global
// function: the verifier checks it once, not in every entry program).
VERIFIED_ONCE int lat_push(struct count_key *k, struct lat_pending *p)
{
	if (!k || !p)
		return 0;
	struct lat_key key = p->key; // a stack copy: 6.1 refuses a PTR_TO_MEM map key
	__u64 height = p->height;
	__u32 probe = k->probe;
	struct lat_stack *st = lat_open(&key, 1, probe);
	if (!st)
		return 0;
	__u32 n = st->depth;
	UNROLLED_PAIRING
	for (int i = 0; i < LAT_DEPTH; i++) {
		if (n == 0 || n > LAT_DEPTH)
			break;
		struct lat_frame *top = frame_at(st, n - 1);
		if (top->height < height)
			break;
		if (top->height == height && top->probe != probe)
			break; // two probes on one function, or a tail call between them
		// A call at this frame or deeper never returned, unless a Go
		// function's entry runs again for the same call (go_restart):
		// then the stat is out of range and not counted. lat_stat is
		// called on both paths, so that they join in one state (a
		// call on one path only doubled 6.1's paths at every frame).
		__u32 stat = LAT_UNWOUND;
		if (p->restart && top->height == height)
			stat = LAT_STAT_MAX;
		lat_stat(top->probe, stat);
		n--;
	}
	if (n >= LAT_DEPTH) {
		st->depth = n;
		st->lost++;
		lat_stat(probe, LAT_TOO_DEEP);
		return 0;
	}
	struct lat_frame *f = frame_at(st, n);
	f->probe = probe;
	f->ustack = k->ustack;
	f->kstack = k->kstack;
	f->height = height;
	f->start = bpf_ktime_get_ns();
	st->depth = n + 1;
	return 0;
}

// lat_found ends the call f of probe that returned at now.
static __always_inline void lat_found(struct lat_frame *f, __u32 probe, __u32 tgid, __u64 now)
{
	__u64 d = now - f->start;
	probe_add(probe, d);
	if (d < min_latency)
		return;
	struct count_key k = {.probe = probe, .tgid = tgid, .ustack = f->ustack, .kstack = f->kstack};
	task_comm(k.comm);
	add_measure(&k, d);
}

// lat_pop pairs the return of probe at height with its entry (a global
// function, like lat_push).
VERIFIED_ONCE int lat_pop(struct lat_key *kp, __u64 height, __u32 probe, __u64 now)
{
	if (!kp)
		return 0;
	struct lat_key key = *kp;
	struct lat_stack *st = lat_open(&key, 0, probe);
	if (!st) {
		lat_stat(probe, LAT_UNMATCHED);
		return 0;
	}
	__u32 n = st->depth;
	UNROLLED_PAIRING
	for (int i = 0; i < LAT_DEPTH; i++) {
		if (n == 0 || n > LAT_DEPTH)
			break;
		struct lat_frame *top = frame_at(st, n - 1);
		if (top->height <= height)
			break;
		lat_stat(top->probe, LAT_UNWOUND); // deeper: never returned
		n--;
	}
	// This probe's frame among those at this height (several probes on
	// one function, or a tail call between probed functions).
	int found = -1;
	for (int i = 0; i < 4; i++) {
		if (i >= (int)n || n > LAT_DEPTH)
			break;
		struct lat_frame *f = frame_at(st, n - 1 - i);
		if (f->height != height)
			break;
		if (f->probe == probe) {
			found = n - 1 - i;
			break;
		}
	}
	if (found < 0 && st->lost > 0) {
		st->lost--; // the return of a call entered too deep (counted)
	} else if (found < 0) {
		lat_stat(probe, LAT_UNMATCHED);
	} else {
		struct lat_frame *f = frame_at(st, found);
		lat_found(f, probe, key.tgid, now);
		if (found != (int)n - 1)
			*f = *frame_at(st, n - 1);
		n--;
	}
	st->depth = n;
	if (n == 0 && st->lost == 0 && key.space == SPACE_GOROUTINE)
		bpf_map_delete_elem(&lat_stacks, &key); // goroutines have no exit hook
	return 0;
}

// lat_return runs at a function's return: a uretprobe or kretprobe (rsp
// is past the return address) or a probe on a RET instruction.
static __always_inline int lat_return(struct pt_regs *r, int kernel)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = probe_cookie(r);
	struct lat_key k = {};
	__u64 height = 0;

	if (measure_mode != MEASURE_LATENCY || !pid_allowed(bpf_get_current_pid_tgid() >> 32))
		return 0;
	__u64 entry_sp = r->rsp - ((cookie >> 32) & COOKIE_RET_INSN ? 0 : 8);
	call_frame(r, entry_sp, kernel, (cookie >> 32) & COOKIE_GO, &k, &height);
	lat_pop(&k, height, (__u32)cookie, now);
	return 0;
}

// lat_expire counts the calls still in flight on key's stack as stat and
// deletes it.
static __always_inline void lat_expire(struct lat_key *key, __u32 stat)
{
	struct lat_stack *st = bpf_map_lookup_elem(&lat_stacks, key);
	if (!st)
		return;
	for (int i = 0; i < LAT_DEPTH; i++) {
		if (i >= st->depth)
			break;
		lat_stat(frame_at(st, i)->probe, stat);
	}
	bpf_map_delete_elem(&lat_stacks, key);
}

// lat_thread_exit ends the calls in flight of the current thread, which
// exits, task: on its user stack and its kernel stack.
static __always_inline void lat_thread_exit(struct task_struct *task)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct lat_key k = {.id = (__u32)id, .tgid = id >> 32, .space = SPACE_THREAD};

	if (measure_mode != MEASURE_LATENCY)
		return;
	lat_expire(&k, LAT_EXITED);
	__u64 stack = (__u64)BPF_CORE_READ((struct task_struct___lat *)task, stack);
	k.space = SPACE_KERNEL;
	for (int i = 0; i < 2; i++) { // a 32 KiB stack (KASAN) spans two regions
		k.region = (stack >> KSTACK_REGION_SHIFT) + i;
		lat_expire(&k, LAT_EXITED);
	}
}

#endif
