// One event of a capture program, from its filter to its count: the user
// registers it starts from, the frame-pointer walk or the start of the
// DWARF walk in the context kind's state slot, the step programs that go
// on with it through tail calls, and the end of the walk, which stores the
// stack and counts the event. The programs (probee.bpf.c) call record and
// step_program.
#ifndef PROBEE_RECORD_H
#define PROBEE_RECORD_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probee.h"
#include "compat.h"
#include "maps.h"
#include "counters.h"
#include "procs.h"
#include "stackstore.h"
#include "fpstack.h"
#include "unwind_state.h"
#include "unwind_maps.h"
#include "uretprobe.h"
#include "mappings.h"
#include "defer.h"
#include "unwind.h"
#include "latency.h"
#include "counts.h"

// scratch_regs is the slot's copy of the user registers (regs_scratch).
static __always_inline struct pt_regs *scratch_regs(__u32 slot)
{
	return bpf_map_lookup_elem(&regs_scratch, &slot);
}

// user_regs copies the current task's user registers into regs.
static __always_inline int user_regs(struct pt_regs *regs)
{
	struct pt_regs *uregs = task_user_regs();

	return bpf_probe_read_kernel(regs, sizeof(*regs), uregs);
}

// begin_event handles the filter and the bookkeeping of one event and fills
// the count key (probe, tgid, comm, kernel stack).
static __always_inline int begin_event(void *ctx, __u64 cookie, int with_kstack,
				       struct count_key *k)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (!traced_pid(tgid, (__u32)id))
		return 0;
	count_hit((__u32)cookie);
	k->probe = (__u32)cookie;
	k->tgid = tgid;
	k->kstack = with_kstack ? store_kernel_stack(ctx) : 0;
	task_comm(k->comm);
	return 1;
}

// record_fp counts an event with a frame-pointer walk of the user stack.
static __always_inline int record_fp(struct count_key *k, __u64 ip, __u64 sp,
				     __u64 bp, int entry, __u32 slot)
{
	__u32 zero = 0;
	struct user_stack *st = bpf_map_lookup_elem(&scratch, &zero);

	if (!st)
		return 0;
	if (user_pc(ip)) {
		if (fp_walk(st, ip, sp, bp, entry))
			mark_gone(st);
		else
			mark_stale(st, sp);
	} else { // a kernel thread (sampling): no user stack
		st->len = 0;
		st->flags = 0;
		st->hash = 2;
	}
	k->ustack = store_user_stack(st);
	count_event(k, slot);
	return 0;
}

// unwind_begin starts a DWARF walk in the state slot of this context kind;
// NULL when the event was handled with frame pointers instead (FP mode, no
// tables for the process yet, a kernel thread).
static __always_inline struct unwind_state *unwind_begin(void *ctx, __u64 cookie,
		struct pt_regs *regs, int with_kstack, __u32 slot)
{
	__u64 ip = PT_REGS_IP(regs), sp = PT_REGS_SP(regs), bp = PT_REGS_FP(regs);
	struct count_key k = {};
	int entry = (cookie >> 32) & COOKIE_ENTRY;

	if (!begin_event(ctx, cookie, with_kstack, &k))
		return NULL;
	lat_prepare(ctx, cookie, slot);
	if (unwind_mode == UNWIND_FP || !user_pc(ip)) {
		record_fp(&k, ip, sp, bp, entry, slot);
		return NULL;
	}
	__u32 key = slot; // slot itself stays a constant the compiler folds
	struct unwind_state *s = bpf_map_lookup_elem(&unwind_states, &key);
	if (s) {
		unwind_reset(s, &k, slot, regs, entry);
		mappings_keep(s, k.tgid); // else proc_list chooses the walk's list
	}
	// Without bpf_find_vma, a walk needs a mapping list: the choice made
	// here is the one its frames use.
	if (!s || (!have_find_vma && !s->mappings.n && !proc_list(s))) {
		count_drop(DROP_NO_TABLES);
		record_fp(&k, ip, sp, bp, entry, slot);
		return NULL;
	}
	return s;
}

// unwind_finish stores the walked stack and counts the event.
static __always_inline int unwind_finish(struct unwind_state *s, __u32 slot)
{
	if ((s->st.flags & STACK_TRUNCATED) && mark_gone(&s->st))
		; // not partial: the task is in execve or exiting
	else if (mark_stale(&s->st, s->gpr[DW_RSP]))
		; // nor here: the registers were the old program's
	else if (s->status.partial && defer_stacks && slot < SLOT_OFFCPU && defer_emit(s))
		return 0; // counted by user space once it has finished the walk (not a wait or waker)
	else if (s->status.busy || s->status.unknown)
		count_drop(DROP_UNKNOWN_PC);
	else if (s->status.partial)
		count_drop(DROP_NO_TABLES);
	else if (s->st.flags & STACK_TRUNCATED)
		count_drop(DROP_CUT);
	if (!s->st.hash)
		s->st.hash = 1;
	s->ev.key.ustack = store_user_stack(&s->st);
	count_event(&s->ev.key, slot);
	return 0;
}

// record handles one event: user registers (ip, sp, bp), ctx for
// bpf_get_stack when with_kstack, the state slot of the context kind, and
// the prog array and index of its step program. Kernel-probe programs call
// it as record(ctx, cookie, &regs, 1, SLOT_KPROBE, steps_kprobe, STEP_KPROBE),
// regs the user registers.
#define record(ctx, cookie, regs, with_kstack, slot, steps, idx)                         \
	({                                                                                 \
		struct unwind_state *s_ = unwind_begin(ctx, cookie, regs, with_kstack, slot); \
		if (s_) {                                                                  \
			if (use_tail_calls)                                                \
				bpf_tail_call(ctx, &steps, idx);                           \
			unwind_inline(s_); /* no tail calls, or the call failed */         \
			unwind_finish(s_, slot);                                           \
		}                                                                          \
		0;                                                                         \
	})

// step_program runs STEP_FRAMES frames of the walk in slot and tail-calls
// itself until the walk ends or the tail-call budget is spent.
#define step_program(ctx, slot, steps, idx)                                               \
	({                                                                                 \
		__u32 key_ = slot; /* slot stays a constant (count_event folds) */        \
		struct unwind_state *s_ = bpf_map_lookup_elem(&unwind_states, &key_);     \
		if (s_) {                                                                  \
			int done_ = run_steps(s_, STEP_FRAMES);                            \
			if (!done_ && s_->status.calls < MAX_TAIL_CALLS - 1) {                    \
				s_->status.calls++;                                               \
				bpf_tail_call(ctx, &steps, idx);                           \
			}                                                                  \
			if (!done_)                                                        \
				s_->st.flags |= STACK_TRUNCATED;                           \
			unwind_finish(s_, slot);                                           \
		}                                                                          \
		0;                                                                         \
	})

#endif
