// The frame-pointer walk of user stacks, and the deduplication of user and
// kernel stacks in ustacks_short/mid/ustacks (by depth) and kstacks (keyed
// by a 64-bit hash of the pcs).
// Included once, from probee.bpf.c, after maps.h and the drop counters.
#ifndef PROBEE_FPSTACK_H
#define PROBEE_FPSTACK_H

// MAX_STACK_SWITCHES (enum walk_depth in probee.h; unwind.MaxStackSwitches
// in Go) is how often a frame-pointer walk may step down the
// address space, to a frame on another stack: Go runs the runtime's work on
// the thread's system stack (systemstack, cgo calls), whose frames point
// back to the goroutine's stack wherever the two lie (goroutine stacks are
// in Go's heap, the main thread's below its environment). Past it, a saved
// rbp that is not above its frame cuts the walk: a loop of frames (garbage
// where code keeps no frame pointer) turns back down at least once a turn.

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

#define PF_EXITING 0x00000004

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
		st->hash = mix(st->len ? st->hash : 0xcbf29ce484222325ULL, gone);
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
	st->hash = mix(0xcbf29ce484222325ULL, STACK_IN_EXEC);
	return 1;
}

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
	__u64 h = 0xcbf29ce484222325ULL;
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
	__u64 h = 0xcbf29ce484222325ULL;
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
