// The frame-pointer walk of user stacks (--unwind fp, and the fallback of
// DWARF mode where a process has no tables yet).
#ifndef PROBEE_FPSTACK_H
#define PROBEE_FPSTACK_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "stackstore.h"

// MAX_STACK_SWITCHES (enum walk_depth in probee.h; unwind.MaxStackSwitches
// in Go) is how often a frame-pointer walk may step down the
// address space, to a frame on another stack: Go runs the runtime's work on
// the thread's system stack (systemstack, cgo calls), whose frames point
// back to the goroutine's stack wherever the two lie (goroutine stacks are
// in Go's heap, the main thread's below its environment). Past it, a saved
// rbp that is not above its frame cuts the walk: a loop of frames (garbage
// where code keeps no frame pointer) turns back down at least once a turn.

// STACK_SWITCH counts fp_walk's stack switches in st->flags while it walks:
// in map memory the verifier does not follow its value through the
// unrolled loop (a counter on the BPF stack multiplies its states past
// the 1M-instruction limit).
#define STACK_SWITCH 0x10000

// fp_switch counts a step down to another stack; 0 when too many were.
// (Checking the new rbp here too, before fp_walk's own check of it, took
// the legacy program past the verifier's limit.)
static __always_inline int fp_switch(struct user_stack *st)
{
	if (st->flags >= MAX_STACK_SWITCHES * STACK_SWITCH)
		return 0;
	st->flags += STACK_SWITCH;
	return 1;
}

// fp_walk fills st with the user stack from regs, walking frame pointers.
// At a function's first instruction the return address is at [sp]. It
// returns 1 when the walk stopped before a zero rbp (the outermost frame's,
// or code without frame pointers).
static __always_inline int fp_walk(struct user_stack *st, __u64 ip, __u64 sp,
				   __u64 bp, int entry)
{
	__u32 n = 0;
	__u64 h = HASH_SEED;
	int cut = 0;

	st->pcs[n++] = ip;
	h = mix(h, ip);
	if (entry) {
		__u64 ra = 0;
		if (bpf_probe_read_user(&ra, sizeof(ra), (void *)sp) == 0 && user_pc(ra)) {
			st->pcs[n++] = ra;
			h = mix(h, ra);
		}
	}
	st->flags = 0;
	for (int i = 0; i < MAX_USTACK; i++) {
		__u64 frame[2] = {}; // saved rbp, return address
		if (n >= MAX_USTACK) {
			st->flags |= STACK_TRUNCATED;
			break;
		}
		// 0 ends the stack; a small integer such as argc, left in rbp by
		// code without frame pointers, is no frame either (it used to
		// stop the walk as a step down; read, it faults, which costs
		// more than the rest of the walk)
		if (bp < 0x1000)
			break;
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)bp)) {
			cut = 1;
			break;
		}
		if (!user_pc(frame[1]))
			break;
		st->pcs[n++] = frame[1];
		h = mix(h, frame[1]);
		// Frames grow upwards; stop on loops and garbage (see
		// MAX_STACK_SWITCHES).
		if (frame[0] == bp || (frame[0] < bp && !fp_switch(st)))
			break;
		bp = frame[0];
	}
	st->len = n;
	st->hash = h ? h : 1;
	st->flags &= STACK_SWITCH - 1;
	return cut;
}

#endif
