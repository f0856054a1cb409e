// Return addresses a pending uretprobe hid: a uretprobe whose function has
// not returned yet replaced the return address on the stack with the
// process's trampoline, and the kernel keeps the real one in the task's
// return instances, which the walk reads back (move_to in unwind.h).
#ifndef PROBEE_URETPROBE_H
#define PROBEE_URETPROBE_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "kernel.h"
#include "compat.h"

// The process's uretprobe trampoline and the task's pending returns.
struct uretprobes {
	__u64 tramp; // uretprobe trampoline address of the process, 0: none
	__u64 ri;    // kernel address of the first pending return_instance
};

// uretprobe_init finds the process's uretprobe trampoline and the pending
// return instances: a pending uretprobe replaced a return address on the
// stack with the trampoline, and the kernel keeps the real one.
//
// It runs at every event: KREAD's plain loads, where the probe reads of
// the legacy build took ~100 ns of the uprobe program's time on the malloc
// benchmark (10-capture.sh).
static __always_inline void uretprobe_init(struct uretprobes *u)
{
	struct task_struct *task = current_task();
	struct uprobe_task *ut = KREAD(task, utask);

	u->tramp = 0;
	u->ri = ut ? (__u64)KREAD(ut, return_instances) : 0;
	if (u->ri) {
		struct mm_struct *mm = KREAD(task, mm);
		struct xol_area *xol = mm ? KREAD(mm, uprobes_state.xol_area) : NULL;
		u->tramp = xol ? KREAD(xol, vaddr) : 0;
	}
}

// real_return finds the return address a pending uretprobe hid at slot
// (probe reads: u->ri, kept in the walk state, is no BTF pointer).
static __always_inline __u64 real_return(struct uretprobes *u, __u64 slot)
{
	struct return_instance *ri = (struct return_instance *)u->ri;

	for (int i = 0; i < 8 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == slot)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}

#endif
