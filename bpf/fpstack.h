// The frame-pointer walk of user stacks, and the deduplication of user and
// kernel stacks in ustacks and kstacks (keyed by a 64-bit hash of the pcs).
// Included once, from probee.bpf.c, after maps.h and the drop counters.
#ifndef PROBEE_FPSTACK_H
#define PROBEE_FPSTACK_H

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

// fp_walk fills st with the user stack from regs, walking frame pointers.
// At a function's first instruction the return address is at [sp].
static __always_inline void fp_walk(struct user_stack *st, __u64 ip, __u64 sp,
				    __u64 bp, int entry)
{
	__u32 n = 0;
	__u64 h = 0xcbf29ce484222325ULL;

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
		if (!bp || bpf_probe_read_user(frame, sizeof(frame), (void *)bp))
			break;
		if (!user_pc(frame[1]))
			break;
		st->pcs[n++] = frame[1];
		h = mix(h, frame[1]);
		if (frame[0] <= bp) // frames grow upwards; stop on loops/garbage
			break;
		bp = frame[0];
	}
	st->len = n;
	st->hash = h ? h : 1;
}

// store_stack deduplicates st (a user_stack or a kernel_stack: same header)
// in m (ustacks or kstacks) and returns its key (0: lost).
static __always_inline __u64 store_stack(void *m, struct user_stack *st, __u32 drop_full,
					 __u32 drop_collision)
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
	return key;
}

static __always_inline __u64 store_user_stack(struct user_stack *st)
{
	return store_stack(&ustacks, st, DROP_USTACK_FULL, DROP_USTACK_COLLISION);
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
	return store_stack(&kstacks, (struct user_stack *)st, DROP_KSTACK_FULL, DROP_KSTACK_COLLISION);
}

#endif
