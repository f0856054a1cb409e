// User and kernel stacks as the programs store them: a 64-bit hash of the
// pcs (mix), deduplicated in ustacks_short/mid/ustacks (by depth class)
// and kstacks keyed by that hash, and the flags of a user stack whose walk
// was cut in a task whose user stack is gone (execve, exit).
#ifndef PROBEE_STACKSTORE_H
#define PROBEE_STACKSTORE_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "maps.h"
#include "counters.h"

// HASH_SEED starts a stack's hash (FNV-1a's offset basis; mix is its step,
// with a final shift).
#define HASH_SEED 0xcbf29ce484222325ULL

// user_pc reports whether v can be a user-space return address (canonical,
// above the null page): a frame-pointer walk through code built without
// frame pointers reads garbage, and must stop there.
static __always_inline int user_pc(__u64 v)
{
	return v >= 0x1000 && v < 0x800000000000ULL;
}

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

// in_execve reports whether task t is inside execve, from bprm_execve on;
// 0 on kernels without the flag.
static __always_inline int in_execve(struct task_struct *t)
{
	return bpf_core_field_exists(t->in_execve) && KREAD_BITFIELD(t, in_execve);
}

// mark_gone explains a user stack walk that did not reach its end in a
// task whose user stack is gone or not its own: inside execve the user
// registers are the old program's while memory may be the new one's (the
// stack is emptied, STACK_IN_EXEC); while the task exits its memory is
// being unmapped (the frames walked stay, STACK_EXITING replaces
// STACK_TRUNCATED). It returns the flag set, 0 for any other task. Only
// cut walks pay for its reads of the task.
static __always_inline __u32 mark_gone(struct user_stack *st)
{
	struct task_struct *t = current_task();
	__u32 gone = 0;

	if (in_execve(t))
		gone = STACK_IN_EXEC;
	else if (BPF_CORE_READ(t, flags) & PF_EXITING)
		gone = STACK_EXITING;
	if (gone == STACK_IN_EXEC)
		st->len = 0;
	if (gone) {
		st->flags = (st->flags & ~STACK_TRUNCATED) | gone;
		st->hash = mix(st->len ? st->hash : HASH_SEED, gone);
	}
	return gone;
}

// mark_stale marks a user stack walked to its end inside execve from the
// old program's registers over the new program's memory (exec_mmap has
// run, start_thread not yet): the word at sp, the event's stack pointer,
// cannot be read, as nothing maps it in the new memory. Where both
// programs are non-PIE executables at one address (Go's), the old pc
// names a function of the new program and the walk ends there uncut, so
// mark_gone never sees it; the stack is emptied and marked as mark_gone
// marks it. Before exec_mmap, registers and memory are the old program's
// (the page at sp is the one the task ran on) and the stack stays. It
// returns 1 when it marked the stack; outside execve it costs one load.
// (bpf_find_vma would tell a mapping from a page not present, but in
// interrupt context it works once an event, and the walk may have used
// that.)
static __always_inline int mark_stale(struct user_stack *st, __u64 sp)
{
	__u64 w;

	if (!in_execve(current_task()) || !bpf_probe_read_user(&w, sizeof(w), (void *)sp))
		return 0;
	st->len = 0;
	st->flags = STACK_IN_EXEC;
	st->hash = mix(HASH_SEED, STACK_IN_EXEC);
	return 1;
}

// store_stack deduplicates st (a user_stack or a kernel_stack: same header)
// in m (ustacks or kstacks) and returns its key (0: lost).
static __always_inline __u64 store_stack(void *m, struct user_stack *st, __u32 drop_full,
					 __u32 drop_collision, __u32 added)
{
	__u64 key = st->hash;
	struct user_stack *old = bpf_map_lookup_elem(m, &key);
	if (old) {
		// Same 64-bit hash: a different stack here is a collision.
		if (old->len != st->len || (st->len && old->pcs[0] != st->pcs[0])) {
			count_drop(drop_collision);
			return 0;
		}
		return key;
	}
	long err = bpf_map_update_elem(m, &key, st, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: raced with another CPU */) {
		count_drop(drop_full);
		return 0;
	}
	if (!err)
		note_added(added);
	return key;
}

// store_user_stack stores st in the map of its depth class, whose number
// replaces the hash's low two bits in the key (enum ustack_class).
static __always_inline __u64 store_user_stack(struct user_stack *st)
{
	// A cut walk and a whole one of the same pcs are two stacks: stored
	// under one key, the first one's flags stood for both, and a cut
	// stack could come out without its [truncated] marker.
	if (st->flags & STACK_TRUNCATED)
		st->hash = mix(st->hash, STACK_TRUNCATED);
	__u64 h = st->hash & ~3ULL;

	if (st->len <= USTACK_SHORT_PCS) {
		st->hash = h | USTACK_SHORT;
		return store_stack(&ustacks_short, st, DROP_USTACK_FULL, DROP_USTACK_COLLISION,
				   ADDED_USTACKS - 1 + USTACK_SHORT);
	}
	if (st->len <= USTACK_MID_PCS) {
		st->hash = h | USTACK_MID;
		return store_stack(&ustacks_mid, st, DROP_USTACK_FULL, DROP_USTACK_COLLISION,
				   ADDED_USTACKS - 1 + USTACK_MID);
	}
	st->hash = h | USTACK_DEEP;
	return store_stack(&ustacks, st, DROP_USTACK_FULL, DROP_USTACK_COLLISION,
			   ADDED_USTACKS - 1 + USTACK_DEEP);
}

// store_kernel_stack takes the kernel stack of ctx and returns its key in
// kstacks (0: lost).
static __always_inline __u64 store_kernel_stack(void *ctx)
{
	__u32 zero = 0;
	struct kernel_stack *st = bpf_map_lookup_elem(&kscratch, &zero);
	if (!st)
		return 0;
	long n = bpf_get_stack(ctx, st->pcs, sizeof(st->pcs), 0);
#ifndef PROBEE_LEGACY
	// A system call tracepoint of older kernels (6.1; not 6.12) gives its
	// programs the task's user registers, where bpf_get_stack finds no
	// kernel stack: the task's kernel stack is walked from here instead
	// (the BPF frames on top are cut in user space: resolver.TrimBPFFrames).
	if (n <= 0)
		n = bpf_get_task_stack(bpf_get_current_task_btf(), st->pcs, sizeof(st->pcs), 0);
#endif
	if (n <= 0) {
		count_drop(DROP_KSTACK_ERROR);
		return 0;
	}
	__u32 len = n / sizeof(__u64);
	__u64 h = HASH_SEED;
	for (int i = 0; i < MAX_STACK; i++) {
		if (i >= len)
			break;
		h = mix(h, st->pcs[i]);
	}
	st->len = len;
	st->flags = 0;
	st->hash = h ? h : 1;
	return store_stack(&kstacks, (struct user_stack *)st, DROP_KSTACK_FULL, DROP_KSTACK_COLLISION, ADDED_KSTACKS);
}

#endif
