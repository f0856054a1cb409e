// Deferred stacks (issue 15): a frame in a file whose unwind table is not
// loaded yet (the first run of a binary the machine never ran while probee
// watched) cannot be unwound in the kernel, and frame pointers rarely help
// there. Instead of counting a partial stack, the walk hands user space
// the frames so far, the registers at that frame and a copy of the stack
// above it; user space finishes the unwind once the file's table is built
// (package proctrack) and counts the stack. The walk goes on by frame
// pointers as before, so a record that does not fit the ring is still
// counted, as a partial stack. The record is built in defer_scratch,
// then copied into the deferred ring cut to its stack length
// (unwind_maps.h).
#ifndef PROBEE_DEFER_H
#define PROBEE_DEFER_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "counters.h"
#include "unwind_state.h"
#include "unwind_maps.h"

// defer_mark remembers the frame the walk could not unwind by its table:
// the first such frame, just pushed.
static __always_inline void defer_mark(struct unwind_state *s)
{
	if (s->status.partial)
		return;
	s->defer.at = s->cur;
	s->defer.npcs = s->st.len > 0 ? s->st.len - 1 : 0;
}

#ifndef PROBEE_LEGACY
static long stack_end_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u64 *)data = BPF_CORE_READ(vma, vm_end);
	return 0;
}
#endif

// stack_len is how many bytes above sp hold frames: up to the main
// stack's first frame (mm->start_stack), else the end of the stack's
// mapping; DEFER_STACK_MAX when that cannot be found (bpf_find_vma works
// once per event in interrupt context), and defer_emit reads less if it
// must.
static __always_inline __u64 stack_len(__u64 sp)
{
	struct task_struct *task = current_task();
	__u64 top = BPF_CORE_READ(task, mm, start_stack);
	__u64 end = 0;

	if (top > sp)
		return top - sp;
#ifdef PROBEE_LEGACY
	return DEFER_STACK_MAX; // no bpf_find_vma (compat.h)
#else
	if (bpf_find_vma(task, sp, stack_end_cb, &end, 0) || end <= sp)
		return DEFER_STACK_MAX;
#endif
	return end - sp;
}

// read_stack copies up to len bytes of stack at sp into buf, fewer where
// the stack's mapping ends sooner (each try halves the length); it
// returns the length read, 0 when nothing could be.
static __always_inline __u64 read_stack(__u8 *buf, __u64 sp, __u64 len)
{
	for (int i = 0; i < 4; i++) {
		if (len > DEFER_STACK_MAX)
			len = DEFER_STACK_MAX;
		if (len && !bpf_probe_read_user(buf, len, (void *)sp))
			return len;
		len /= 2;
	}
	return 0;
}

// defer_regs fills d's registers: the interrupted ones, rbx as the frame
// at d->ip has it (saved by a callee: read from its slot).
static __always_inline int defer_regs(struct deferred_stack *d, struct unwind_state *s)
{
	if (bpf_probe_read_kernel(d->gpr, sizeof(d->gpr), s->gpr))
		return -1;
	if (s->defer.at.bx_at && bpf_probe_read_user(&d->gpr[DW_RBX], 8, (void *)s->defer.at.bx_at))
		d->gpr[DW_RBX] = 0; // unknown: a rule that needs it stops there
	d->ip = s->defer.at.ip;
	d->sp = s->defer.at.sp;
	d->bp = s->defer.at.bp;
	d->exact = s->defer.at.exact;
	return 0;
}

// defer_emit sends the walk of s to user space; 0 when it could not.
static __always_inline int defer_emit(struct unwind_state *s)
{
	__u32 slot = s->ev.slot;
	struct deferred_stack *d = bpf_map_lookup_elem(&defer_scratch, &slot);
	__u32 npcs = s->defer.npcs;

	if (!d || defer_regs(d, s))
		return 0;
	if (npcs > MAX_USTACK)
		npcs = MAX_USTACK;
	__u64 pcs = npcs * 8;
	if (pcs && bpf_probe_read_kernel(d->tail, pcs, s->st.pcs))
		return 0;
	__u64 len = read_stack(d->tail + pcs, s->defer.at.sp, stack_len(s->defer.at.sp));
	if (!len)
		return 0;
	d->key = s->ev.key;
	d->pid = (__u32)bpf_get_current_pid_tgid();
	d->npcs = npcs;
	d->len = len;
	d->ppid = BPF_CORE_READ(current_task(), real_parent, tgid);
	__u64 size = __builtin_offsetof(struct deferred_stack, tail) + pcs + len;
	if (bpf_ringbuf_output(&deferred, d, size, 0)) {
		count_drop(DROP_DEFER_LOST);
		return 0;
	}
	return 1;
}

#endif
