// DWARF unwinding of user stacks in BPF, from the compact tables of package
// unwind (byte layout in unwind/doc.go; map storage in bpf/doc.go).
//
// One frame step: find the pc's mapping in the process's sorted mapping array
// (proc_maps, keyed by tgid), look the table pc up in the binary's page index
// and entries (pc-1 for return addresses), compute the CFA from the rule
// (rsp, rbp, PLT or signal frame), read the return address at CFA-8 and rbp
// by its rule. Mappings without a table take a frame-pointer step.
//
// The walk state lives in a per-CPU slot per context kind (a perf sample can
// interrupt an in-flight uprobe unwind), so it survives tail calls: each step
// program does STEP_FRAMES frames and tail-calls itself, up to the kernel's
// limit; the inline path runs the same step in bpf_loop (or, with no
// bpf_loop, a bounded loop of INLINE_FRAMES).
#ifndef PROBEE_UNWIND_H
#define PROBEE_UNWIND_H


#define STEP_FRAMES 8    // frames per tail-called step program
#define MAX_TAIL_CALLS 32 // the kernel allows 33 (32 before 5.17)
#define INLINE_FRAMES 24 // the no-bpf_loop inline path (verifier-bound)

// Per-CPU state slots, one per context kind.
enum unwind_slot {
	SLOT_UPROBE = 0,
	SLOT_UPROBE_MULTI = 1,
	SLOT_KPROBE = 2,
	SLOT_TRACEPOINT = 3,
	SLOT_PERF = 4,
	SLOT_MAX = 5,
};

// Indexes in the kprobe-typed prog array (uprobe and kprobe programs share
// it: both are BPF_PROG_TYPE_KPROBE with no expected attach type).
enum { STEP_UPROBE = 0, STEP_KPROBE = 1 };

enum unwind_mode { UNWIND_FP = 0, UNWIND_DWARF = 1 };

// Set by the loader before load (rodata).
const volatile __u32 unwind_mode = UNWIND_FP;
const volatile __u32 use_tail_calls = 1;
const volatile __u32 have_bpf_loop = 1;

// The walk copies the user stack in chunks of STACK_CHUNK bytes, one read
// for several frames: each bpf_probe_read_user costs about as much as a
// frame's table lookup.
#define STACK_CHUNK 512

struct unwind_state {
	__u64 ip, sp, bp;
	__u64 di;     // the interrupted frame's rdi (CFA_RSP_RET_RDI)
	__u64 ax;     // and its rax (syscall_gap_step)
	__u64 bx;     // and its rbx; the frame's rbx unless bx_at is set (frame_rbx)
	__u64 bx_at;  // where the frame's rbx was saved: the last slot a callee's rule named
	__u64 tramp;  // uretprobe trampoline address of the process, 0: none
	__u64 ri;     // kernel address of the first pending return_instance
	__u32 exact;  // ip is not a return address (first frame, signal frames)
	__u32 calls;  // tail calls made
	__u32 done;
	__u32 entry;   // the event is at a function's first instruction
	__u32 vm_ok;   // vm holds the mapping bpf_find_vma found last (vma.h)
	__u32 partial; // a frame was in a file whose table is not loaded
	__u32 slot;    // the context kind's slot (enum unwind_slot)
	__u32 busy;    // bpf_find_vma failed (interrupt context): cut, to be finished in user space
	__u32 unknown; // cut at a pc no mapping holds
	__u32 switches; // frame-pointer steps down to another stack (fp_step)
	__u32 dn, dexact;     // defer.h: frames before the first such frame, its exact
	__u64 dip, dsp, dbp;  // and its registers
	struct unwind_mapping vm;
	// The last two mappings of the process's list (proc_maps) this walk
	// found, most recent first: a walk goes back and forth between a few
	// files (libc, the program), and each frame found here skips a hash
	// lookup and a binary search (known_mapping).
	struct unwind_mapping pm[2];
	__u32 pm_n;
	__u64 word;      // a word read from the user stack: here, not on the BPF stack (512 bytes for all calls)
	__u32 chunk_off; // chunk holds no stack (a copy failed near the stack's top: read each word)
	__u64 chunk_at;  // user address of chunk[0]; 0: nothing copied yet
	__u8 chunk[STACK_CHUNK]; // stack_u64
	struct count_key key;
	struct user_stack st;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct unwind_state);
} unwind_states SEC(".maps");

// The user registers kernel-context programs copy for an event (kprobes,
// tracepoints, samples in kernel mode), per CPU and context kind like
// unwind_states: in a map, as the BPF stack (512 bytes) is shared by all the
// calls of a program, the walk's included (bpf/stack_test.go).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct pt_regs);
} regs_scratch SEC(".maps");

static __always_inline struct pt_regs *scratch_regs(__u32 slot)
{
	return bpf_map_lookup_elem(&regs_scratch, &slot);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct proc_info);
} proc_maps SEC(".maps");

// Table storage: one u32 space in shards of SHARD_U32S elements, created
// by the loader as tables need them (unwind_shards[i] holds elements
// i*SHARD_U32S..; max_entries set by the loader from the table budget).
// Each table's page index and entries lie one after the other in it (at
// pages_off, entries_off; the entries padded, see find_rule); rules are
// shared (unwind.RuleSet). All shards have one size, so the verifier
// inlines the lookups.
#define SHARD_SHIFT 16
#define SHARD_U32S (1 << SHARD_SHIFT) // 256 KiB per shard

struct unwind_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHARD_U32S);
	__type(key, __u32);
	__type(value, __u32); // page index element, or u16 pc_low | u16 rule << 16
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__array(values, struct unwind_shard);
} unwind_shards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 14);
	__type(key, __u32);
	__type(value, struct unwind_rule);
} unwind_rules SEC(".maps");

// Step programs for tail calls, one array per program type (a prog array is
// bound to the type and expected attach type of its first user).
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} steps_kprobe SEC(".maps");

#define ONE_STEP_ARRAY(name)                         \
	struct {                                     \
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY); \
		__uint(max_entries, 1);              \
		__type(key, __u32);                  \
		__type(value, __u32);                \
	} name SEC(".maps")

ONE_STEP_ARRAY(steps_multi);
ONE_STEP_ARRAY(steps_tp);
ONE_STEP_ARRAY(steps_perf);


// uretprobe_init finds the process's uretprobe trampoline and the pending
// return instances: a pending uretprobe replaced a return address on the
// stack with the trampoline, and the kernel keeps the real one.
static __always_inline void uretprobe_init(struct unwind_state *s)
{
	struct task_struct *task = current_task();
	struct uprobe_task *ut = BPF_CORE_READ(task, utask);

	s->tramp = 0;
	s->ri = 0;
	if (!ut)
		return;
	s->ri = (__u64)BPF_CORE_READ(ut, return_instances);
	if (s->ri)
		s->tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
}

#include "defer.h"
#include "vma.h"

// real_return finds the return address a pending uretprobe hid at slot.
static __always_inline __u64 real_return(struct unwind_state *s, __u64 slot)
{
	struct return_instance *ri = (struct return_instance *)s->ri;

	for (int i = 0; i < 8 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == slot)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}

// le reports x <= y for values below 2^63 without a branch: the binary
// searches below are branch-free, or the verifier's path count explodes.
static __always_inline __u64 le(__u64 x, __u64 y)
{
	return 1 - ((y - x) >> 63);
}

// find_mapping binary-searches the process's sorted mappings for pc.
static __always_inline struct unwind_mapping *find_mapping(struct proc_info *p, __u64 pc)
{
	__u32 n = p->n, base = 0;

	if (n == 0 || n > MAX_MAPPINGS)
		return NULL;
	// Last mapping whose start <= pc.
	for (int i = 0; i < 9 && n > 1; i++) { // log2(MAX_MAPPINGS)+1
		__u32 half = n / 2;
		struct unwind_mapping *m = &p->maps[(base + half) & (MAX_MAPPINGS - 1)];
		base += half * le(m->start, pc);
		n -= half;
	}
	struct unwind_mapping *m = &p->maps[base & (MAX_MAPPINGS - 1)];
	if (pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

// storage_shard returns the shard of the table storage that holds
// element idx; NULL: none was created.
static __always_inline void *storage_shard(__u32 idx)
{
	__u32 i = idx >> SHARD_SHIFT;
	return bpf_map_lookup_elem(&unwind_shards, &i);
}

// shard_u32 reads element idx of the table storage from sh, its shard.
static __always_inline __u32 shard_u32(void *sh, __u32 idx, int *ok)
{
	__u32 off = idx & (SHARD_U32S - 1);
	__u32 *v = bpf_map_lookup_elem(sh, &off);
	if (!v) {
		*ok = 0;
		return 0;
	}
	return *v;
}

// A per-CPU cache of table lookups, direct-mapped: hot code is walked
// through the same pcs event after event (a probed function's callers, a
// sampled loop), and a hit skips find_rule's binary search. Tables are
// never freed nor moved during a session, so (entries_off, tpc) names one
// table's pc for good. Programs of other contexts can interrupt an update
// on the same CPU (a sample during a uprobe's walk), so a slot's value
// carries a check of its key: a slot written halfway is a miss.
#define RULE_CACHE_BITS 12

struct rule_cache_slot {
	__u64 key; // (entries_off + 1) << 32 | tpc; 0: empty
	__u64 val; // rule | rule_check(key) << 32
};

static __always_inline __u64 rule_check(__u64 key)
{
	return (key * 0x9E3779B97F4A7C15ULL) >> 32;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << RULE_CACHE_BITS);
	__type(key, __u32);
	__type(value, struct rule_cache_slot);
} rule_cache SEC(".maps");

static __always_inline __u64 page_of(__u64 tpc)
{
	return tpc >> 16;
}

// search_rule is the index of the rule of table pc tpc in m's table,
// by binary search; -1: none, or the table storage is missing. The loader
// places a table's page index in one shard, and each page's entries with
// the element before them in one shard (padding where needed), so a frame
// takes two shard lookups.
static __always_inline long search_rule(struct unwind_mapping *m, __u64 tpc)
{
	__u64 page = page_of(tpc);
	__u32 low = tpc & 0xffff;
	int ok = 1;

	if (page >= m->npages)
		return -1;
	__u32 pi = m->pages_off + (__u32)page;
	void *sh = storage_shard(pi);
	if (!sh)
		return -1;
	__u32 lo = shard_u32(sh, pi, &ok);
	__u32 hi = shard_u32(sh, pi + 1, &ok);
	if (!ok || !(sh = storage_shard(m->entries_off + lo)))
		return -1;
	// Last entry in [lo, hi) with pc_low <= low (branch-free lower bound).
	__u32 base = lo, n = hi - lo;
	for (int i = 0; i < 17 && n > 1; i++) {
		__u32 half = n / 2;
		__u32 e = shard_u32(sh, m->entries_off + base + half, &ok);
		base += half * le(e & 0xffff, low);
		n -= half;
	}
	__u32 e = shard_u32(sh, m->entries_off + base, &ok);
	if (hi <= lo || (e & 0xffff) > low) {
		// None in this page: the last entry of an earlier page applies.
		if (base == 0)
			return -1;
		e = shard_u32(sh, m->entries_off + base - 1, &ok);
	}
	if (!ok)
		return -1;
	return e >> 16;
}

// rule_slot is the rule_cache slot of table pc tpc of m's table, and its
// key there; NULL: tpc does not fit a slot.
static __always_inline struct rule_cache_slot *rule_slot(struct unwind_mapping *m, __u64 tpc, __u64 *key)
{
	if (tpc >> 32)
		return NULL;
	*key = (__u64)(m->entries_off + 1) << 32 | tpc;
	__u32 i = rule_check(*key) & ((1 << RULE_CACHE_BITS) - 1);
	return bpf_map_lookup_elem(&rule_cache, &i);
}

// cached_rule is the rule index rule_cache holds for table pc tpc of m's
// table; -1: none.
static __always_inline long cached_rule(struct unwind_mapping *m, __u64 tpc)
{
	__u64 key = 0;
	struct rule_cache_slot *c = rule_slot(m, tpc, &key);

	if (!c || c->key != key || c->val >> 32 != rule_check(key))
		return -1;
	return c->val & 0xffff;
}

// cache_rule keeps rule for table pc tpc of m's table in rule_cache.
static __always_inline void cache_rule(struct unwind_mapping *m, __u64 tpc, long rule)
{
	__u64 key = 0;
	struct rule_cache_slot *c = rule_slot(m, tpc, &key);

	if (c) {
		c->key = key;
		c->val = (__u64)rule | rule_check(key) << 32;
	}
}

// find_rule looks up table pc tpc in m's table, through rule_cache; NULL:
// no rule. Nothing of the cache lookup stays live across the search: the
// BPF stack of all calls together is 512 bytes, and spills count.
static __always_inline struct unwind_rule *find_rule(struct unwind_mapping *m, __u64 tpc)
{
	if (page_of(tpc) >= m->npages)
		return NULL;
	long rule = cached_rule(m, tpc);
	if (rule < 0) {
		rule = search_rule(m, tpc);
		if (rule < 0)
			return NULL;
		cache_rule(m, tpc, rule);
	}
	__u32 ri = rule;
	struct unwind_rule *r = bpf_map_lookup_elem(&unwind_rules, &ri);
	if (!r || r->cfa_type == CFA_NONE)
		return NULL;
	return r;
}

enum step_result { STEP_CONTINUE = 0, STEP_END = 1, STEP_CUT = 2 };

// push appends the current pc to the stack.
static __always_inline int push(struct unwind_state *s)
{
	__u32 n = s->st.len;

	if (n >= MAX_USTACK)
		return STEP_CUT;
	s->st.pcs[n & (MAX_USTACK - 1)] = s->ip;
	s->st.hash = mix(s->st.hash, s->ip);
	s->st.len = n + 1;
	return STEP_CONTINUE;
}

// move_to makes (ra, cfa) the next frame, replacing a uretprobe trampoline
// return address by the real one.
static __always_inline int move_to(struct unwind_state *s, __u64 ra, __u64 cfa)
{
	if (s->tramp && ra == s->tramp)
		ra = real_return(s, cfa - 8);
	if (ra == 0)
		return STEP_END;
	if (cfa <= s->sp || !user_pc(ra))
		return STEP_CUT;
	s->ip = ra;
	s->sp = cfa;
	s->exact = 0;
	return STEP_CONTINUE;
}

// stack_u64 reads the word at addr of the user stack: from the chunk copied
// last when it holds addr, else from a new chunk copied at addr (the walk
// goes up the stack), else directly.
static __always_inline int stack_u64(struct unwind_state *s, __u64 addr, __u64 *v)
{
	__u64 off = addr - s->chunk_at;

	if (s->chunk_off)
		return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
	if (!s->chunk_at || addr < s->chunk_at || off > STACK_CHUNK - sizeof(*v)) {
		if (bpf_probe_read_user(s->chunk, STACK_CHUNK, (void *)addr)) {
			s->chunk_off = 1; // past the chunk, the stack ends
			return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
		}
		s->chunk_at = addr;
		off = 0;
	}
	if (off > STACK_CHUNK - sizeof(*v))
		return -1;
	*v = *(__u64 *)&s->chunk[off];
	return 0;
}

// fp_step moves to the caller by the frame pointer. A frame whose saved
// rbp points below it is on another stack (see MAX_STACK_SWITCHES): the
// walk goes on there, up to that many times.
static __always_inline int fp_step(struct unwind_state *s)
{
	if (!s->bp)
		return STEP_END;
	if (!user_pc(s->bp)) // no frame's address (argc, left in rbp by code without frame pointers): reading it would fault
		return STEP_CUT;
	__u64 cfa = s->bp + 16;
	if (stack_u64(s, cfa - 8, &s->word)) // the return address
		return STEP_CUT;
	__u64 ra = s->word;
	if (stack_u64(s, cfa - 16, &s->bp)) // the saved rbp
		return STEP_CUT;
	if (cfa < s->sp) {
		if (s->switches >= MAX_STACK_SWITCHES)
			return STEP_CUT;
		s->switches++;
		s->sp = 0; // another stack: any cfa is above this one
	}
	return move_to(s, ra, cfa);
}

// frame_rbx reads the current frame's rbx: from the slot where the last
// callee that saved rbx put it, else the interrupted rbx (no callee
// changed it).
static __always_inline int frame_rbx(struct unwind_state *s, __u64 *v)
{
	if (!s->bx_at) {
		*v = s->bx;
		return 0;
	}
	return stack_u64(s, s->bx_at, v);
}

static __always_inline int signal_step(struct unwind_state *s)
{
	__u64 sc[3] = {}; // rbp at +120, rsp at +160, rip at +168

	if (bpf_probe_read_user(&sc[0], 8, (void *)(s->sp + 120)) ||
	    bpf_probe_read_user(&sc[1], 16, (void *)(s->sp + 160)))
		return STEP_CUT;
	s->bx_at = s->sp + 128; // sigcontext's rbx (unwind.SigcontextRBX)
	s->bp = sc[0];
	s->sp = sc[1];
	s->ip = sc[2];
	s->exact = 1;
	return user_pc(s->ip) ? STEP_CONTINUE : STEP_CUT;
}

static __always_inline int rule_step(struct unwind_state *s, struct unwind_rule *r)
{
	__u64 cfa, ra = 0;

	switch (r->cfa_type) {
	case CFA_RSP:
		cfa = s->sp + (__s64)r->cfa_offset;
		break;
	case CFA_RBP:
		cfa = s->bp + (__s64)r->cfa_offset;
		break;
	case CFA_PLT:
		cfa = s->sp + (__s64)r->cfa_offset;
		if ((s->ip & 15) >= r->plt_threshold)
			cfa += 8;
		break;
	case CFA_RSP_RET_RDI:
		if (s->st.len != 1) // only the interrupted frame's rdi is known
			return STEP_CUT;
		cfa = s->sp + (__s64)r->cfa_offset;
		ra = s->di;
		break;
	case CFA_RBX:
		if (frame_rbx(s, &s->word))
			return STEP_CUT;
		cfa = s->word + (__s64)r->cfa_offset;
		break;
	case CFA_SIGNAL:
		return signal_step(s);
	case CFA_END:
		return STEP_END;
	default:
		return STEP_CUT;
	}
	if (r->rbx_slot)
		s->bx_at = cfa + 8 * (__s64)r->rbx_slot;
	if (r->cfa_type != CFA_RSP_RET_RDI) {
		if (stack_u64(s, cfa - 8, &s->word))
			return STEP_CUT;
		ra = s->word;
	}
	if (r->rbp_type == RBP_OFFSET) {
		if (stack_u64(s, cfa + (__s64)r->rbp_offset, &s->bp))
			return STEP_CUT;
	} else if (r->rbp_type == RBP_UNDEFINED) {
		s->bp = 0;
	}
	if (r->cfa_type == CFA_RSP_RET_RDI && cfa == s->sp)
		s->sp = cfa - 1; // the return address was popped: the CFA may be rsp itself, which move_to's progress check refuses
	return move_to(s, ra, cfa);
}

// entry_step takes the caller of a function stopped at its first
// instruction from [rsp] (rbp still belongs to the caller).
static __always_inline int entry_step(struct unwind_state *s)
{
	if (stack_u64(s, s->sp, &s->word))
		return STEP_CUT;
	return move_to(s, s->word, s->sp + 8);
}

// after_syscall reports whether the instruction before s->ip is syscall
// (0f 05).
static __always_inline int after_syscall(struct unwind_state *s)
{
	s->word = 0;
	return !bpf_probe_read_user(&s->word, 2, (void *)(s->ip - 2)) && s->word == 0x050f;
}

// syscall_gap_step moves to the caller of a first frame stopped right
// after a syscall instruction that its file's table does not cover:
// glibc's clone and clone3 end their FDE before the syscall, since the
// child's unwind information would be wrong there. The parent (in the
// system call, rax -ENOSYS, or back from it) pushed nothing: its caller is
// at [rsp]. A new child (rax 0, on its new stack) is the outermost frame.
static __always_inline int syscall_gap_step(struct unwind_state *s)
{
	return s->ax ? entry_step(s) : STEP_END;
}

// no_rule_step moves to the caller of a pc without a DWARF rule.
static __always_inline int no_rule_step(struct unwind_state *s, int first)
{
	return first && s->entry ? entry_step(s) : fp_step(s);
}

// known_mapping returns the mapping of s->ip from the process's list:
// one of the two found last, or found now and remembered (pm).
static __always_inline struct unwind_mapping *known_mapping(struct unwind_state *s)
{
	if (s->pm_n > 0 && s->ip >= s->pm[0].start && s->ip < s->pm[0].end)
		return &s->pm[0];
	if (s->pm_n > 1 && s->ip >= s->pm[1].start && s->ip < s->pm[1].end)
		return &s->pm[1];
	__u32 tgid = s->key.tgid; // a stack copy: 6.1 refuses a PTR_TO_MEM map key
	struct proc_info *p = bpf_map_lookup_elem(&proc_maps, &tgid);
	struct unwind_mapping *m = p ? find_mapping(p, s->ip) : NULL;
	if (!m)
		return NULL;
	s->pm[1] = s->pm[0];
	s->pm[0] = *m;
	s->pm_n = s->pm_n < 2 ? s->pm_n + 1 : 2;
	return &s->pm[0];
}

// unwind_step records the current frame and moves to its caller: by the
// pc's DWARF rule where its file has a table, else from [rsp] at a
// function's entry or by frame pointers (JIT code, Go, tables not loaded
// or too big); the next frame with a table is unwound by DWARF again.
static __always_inline int unwind_step(struct unwind_state *s)
{
	int first = s->st.len == 0;

	if (push(s))
		return STEP_CUT;
	struct unwind_mapping *m = known_mapping(s);
	if (!m)
		m = vma_mapping(s);
	if (!m) {
		s->unknown = !s->busy; // counted when the walk ends (unwind_finish)
		return STEP_CUT;
	}
	if (!(m->flags & MAPPING_TABLE))
		return no_rule_step(s, first);
	__u64 tpc = s->ip - m->bias - (s->exact ? 0 : 1);
	struct unwind_rule *r = find_rule(m, tpc);
	if (!r && first && after_syscall(s))
		return syscall_gap_step(s);
	if (!r) // code its table does not cover (V8's embedded builtins in node)
		return no_rule_step(s, first);
	return rule_step(s, r);
}

// unwind_frame is one step as a global function: the verifier checks it
// once, not once per unrolled loop iteration of every caller.
VERIFIED_ONCE int unwind_frame(struct unwind_state *s)
{
	if (!s)
		return STEP_CUT;
	return unwind_step(s);
}

// run_steps does up to n steps; it returns nonzero when the walk is over.
static __always_inline int run_steps(struct unwind_state *s, int n)
{
	for (int i = 0; i < n; i++) {
		int r = unwind_frame(s);
		if (r == STEP_END)
			return 1;
		if (r != STEP_CONTINUE) {
			s->st.flags |= STACK_TRUNCATED;
			return 1;
		}
	}
	return 0;
}

struct loop_ctx {
	struct unwind_state *s;
};

#ifndef PROBEE_LEGACY
static long loop_step(__u64 i, void *ctx)
{
	struct loop_ctx *l = ctx;
	return run_steps(l->s, 1);
}
#endif

// unwind_inline walks the rest of the stack without tail calls.
static __always_inline void unwind_inline(struct unwind_state *s)
{
#ifndef PROBEE_LEGACY
	if (have_bpf_loop) {
		struct loop_ctx l = {s};
		if (bpf_loop(MAX_USTACK, loop_step, &l, 0) >= MAX_USTACK)
			s->st.flags |= STACK_TRUNCATED;
		return;
	}
#endif
	if (!run_steps(s, INLINE_FRAMES))
		s->st.flags |= STACK_TRUNCATED;
}

#endif
