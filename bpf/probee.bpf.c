//go:build ignore

// probee's capture programs. One program per context kind (uprobe, uprobe_multi,
// tracepoint); every attach carries a cookie: bits 0-31 the probe id, bit 32 set
// when the probe sits on a function's first instruction (the caller's return
// address is then at [rsp], and rbp still belongs to the caller).
//
// Each event walks the user stack with frame pointers, deduplicates it in
// ustacks (keyed by a 64-bit hash of its pcs), takes the kernel stack with
// bpf_get_stackid where the context has one, and counts the event in counts
// keyed by (probe, tgid, comm, user stack, kernel stack). Every loss is
// counted per CPU in drops, by cause.

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probee.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// Set by the loader before load (rodata).
const volatile __u32 filter_pids = 0; // 1: only tgids in the pids map

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct user_stack);
} ustacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK * sizeof(__u64));
} kstacks SEC(".maps");

// tgids to trace when filter_pids is set; children are added at fork.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

// tgids already announced to user space (which snapshots their mappings).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROP_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

// Scratch space for one user stack, per CPU (too big for the BPF stack).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct user_stack);
} scratch SEC(".maps");

// Force the event struct into BTF for bpf2go -type.
const struct event *unused_event __attribute__((unused));

static __always_inline void count_drop(__u32 cause)
{
	__u64 *v = bpf_map_lookup_elem(&drops, &cause);
	if (v)
		*v += 1;
}

static __always_inline void count_hit(__u32 probe)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &probe);
	if (v)
		*v += 1;
}

static __always_inline int pid_allowed(__u32 tgid)
{
	if (!filter_pids)
		return 1;
	return bpf_map_lookup_elem(&pids, &tgid) != NULL;
}

// announce tells user space the first time a tgid produces an event.
static __always_inline void announce(__u32 tgid, __u32 pid)
{
	__u8 one = 1;
	if (bpf_map_lookup_elem(&seen, &tgid))
		return;
	if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
		return; // another CPU announced it
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		bpf_map_delete_elem(&seen, &tgid); // retry on the next event
		count_drop(DROP_EVENT_LOST);
		return;
	}
	e->type = EVENT_NEW_PROCESS;
	e->tgid = tgid;
	e->pid = pid;
	bpf_ringbuf_submit(e, 0);
}

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
	for (int i = 0; i < MAX_STACK; i++) {
		__u64 frame[2] = {}; // saved rbp, return address
		if (n >= MAX_STACK) {
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

// store_user_stack deduplicates st in ustacks and returns its key (0: lost).
static __always_inline __u64 store_user_stack(struct user_stack *st)
{
	__u64 key = st->hash;
	struct user_stack *old = bpf_map_lookup_elem(&ustacks, &key);
	if (old) {
		// Same 64-bit hash: a different stack here is a collision.
		if (old->len != st->len || old->pcs[0] != st->pcs[0]) {
			count_drop(DROP_USTACK_COLLISION);
			return 0;
		}
		return key;
	}
	long err = bpf_map_update_elem(&ustacks, &key, st, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: raced with another CPU */) {
		count_drop(DROP_USTACK_FULL);
		return 0;
	}
	return key;
}

static __always_inline void add_count(struct count_key *k)
{
	__u64 one = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(&counts, k, &one, BPF_NOEXIST) == 0)
		return;
	v = bpf_map_lookup_elem(&counts, k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		count_drop(DROP_COUNTS_FULL);
}

// record handles one event with the user registers regs and, for contexts
// that have a kernel stack, ctx for bpf_get_stackid (NULL otherwise).
static __always_inline int record(void *ctx, __u64 cookie, __u64 ip, __u64 sp,
				  __u64 bp, int with_kstack)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	__u32 probe = (__u32)cookie;

	if (!pid_allowed(tgid))
		return 0;
	count_hit(probe);
	announce(tgid, (__u32)id);

	struct count_key k = {};
	k.probe = probe;
	k.tgid = tgid;
	k.kstack = -1;
	bpf_get_current_comm(k.comm, sizeof(k.comm));

	struct user_stack *st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st)
		return 0;
	fp_walk(st, ip, sp, bp, (cookie >> 32) & COOKIE_ENTRY);
	k.ustack = store_user_stack(st);
	if (with_kstack) {
		long kid = bpf_get_stackid(ctx, &kstacks, 0);
		if (kid >= 0)
			k.kstack = kid;
		else
			count_drop(kid == -17 ? DROP_KSTACK_COLLISION : DROP_KSTACK_ERROR);
	}
	add_count(&k);
	return 0;
}

static __always_inline int on_uprobe(struct pt_regs *regs)
{
	__u64 cookie = bpf_get_attach_cookie(regs);
	return record(regs, cookie, PT_REGS_IP(regs), PT_REGS_SP(regs),
		      PT_REGS_FP(regs), 0);
}

SEC("uprobe")
int probee_uprobe(struct pt_regs *regs)
{
	return on_uprobe(regs);
}

SEC("uprobe.multi")
int probee_uprobe_multi(struct pt_regs *regs)
{
	return on_uprobe(regs);
}

// Tracepoints run in kernel context: the user registers come from the task.
SEC("tracepoint")
int probee_tracepoint(void *ctx)
{
	struct pt_regs regs = {};
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u64 cookie = bpf_get_attach_cookie(ctx);

	if (bpf_probe_read_kernel(&regs, sizeof(regs), uregs))
		return 0;
	return record(ctx, cookie, PT_REGS_IP(&regs), PT_REGS_SP(&regs),
		      PT_REGS_FP(&regs), 1);
}

// Minimal CO-RE view of the kernel's task_struct (relocated through BTF).
struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

// Children of traced processes are traced too (-p PID, -- CMD).
SEC("tp_btf/sched_process_fork")
int BPF_PROG(probee_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (!filter_pids || ptgid == ctgid) // no filter, or a new thread
		return 0;
	if (!bpf_map_lookup_elem(&pids, &ptgid))
		return 0;
	bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int probee_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((__u32)id != tgid) // a thread exiting, not the process
		return 0;
	if (!bpf_map_lookup_elem(&seen, &tgid))
		return 0;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(DROP_EVENT_LOST);
		return 0;
	}
	e->type = EVENT_EXIT;
	e->tgid = tgid;
	e->pid = (__u32)id;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
