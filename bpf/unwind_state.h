// The state of a user-stack walk and the maps it reads: per-CPU state
// slots, the processes' mapping arrays, the table storage shards and the
// step programs' arrays (see unwind.h). Included from unwind.h.
#ifndef PROBEE_UNWIND_STATE_H
#define PROBEE_UNWIND_STATE_H

// STEP_FRAMES, MAX_TAIL_CALLS, INLINE_FRAMES, SHARD_SHIFT, enum
// unwind_strategy, enum step_index and enum maps_gen_index are in probee.h.

// Per-CPU state slots, one per context kind.
enum unwind_slot {
	SLOT_UPROBE = 0,
	SLOT_UPROBE_MULTI = 1,
	SLOT_KPROBE = 2,
	SLOT_TRACEPOINT = 3,
	SLOT_PERF = 4,
	SLOT_MAX = 5,
};

// Set by the loader before load (rodata).
const volatile __u32 unwind_mode = UNWIND_FP;
const volatile __u32 use_tail_calls = 1;
const volatile __u32 have_bpf_loop = 1;

// The walk copies the user stack in chunks of STACK_CHUNK bytes, one read
// for several frames: each bpf_probe_read_user costs about as much as a
// frame's table lookup.
#define STACK_CHUNK 512

enum dwarf_reg { DW_RAX = 0, DW_RBX = 3, DW_RDI = 5, DW_RSP = 7 };

// A rule the walk state keeps for a table pc (rules.h: find_rule).
#define FRAME_RULES 64 // a power of two; deeper frames share slots
struct frame_rule {
	__u64 key; // as rule_cache's: (entries_off + 1) << 32 | tpc; 0: empty
	struct unwind_rule r;
	__u32 check; // frame_check(key, r): a slot written halfway is a miss
};

struct unwind_state {
	__u64 ip, sp, bp;
	// The interrupted frame's general registers by DWARF number (enum
	// dwarf_reg): for its CFA_REG and CFA_RSP_RET_RDI rules, rax for
	// syscall_gap_step, rbx for frame_rbx (the frame's rbx unless bx_at
	// is set).
	__u64 gpr[16];
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
	__u32 go_entry; // go_switch_step moved to a Go function that has not pushed rbp: its caller is at [rsp]
	__u32 dn, dexact;     // defer.h: frames before the first such frame, its exact
	__u64 dip, dsp, dbp;  // and its registers
	__u64 dbx_at;         // and bx_at there
	struct unwind_mapping vm;
	// The last two mappings of the process's list (proc_maps) this walk
	// found, most recent first: a walk goes back and forth between a few
	// files (libc, the program), and each frame found here skips a hash
	// lookup and a binary search (known_mapping). They outlive the walk:
	// the slot's next event keeps them when it is the same process's and
	// no list changed in between (pm_keep).
	struct unwind_mapping pm[2];
	__u32 pm_n;
	__u32 maps_tgid; // whose list proc_list chose (0: not yet)
	__u32 pm_tgid;   // the process pm and maps_tgid were found for (0: none)
	__u64 pm_gen[2]; // maps_gen when they were
	__u64 word;      // a word read from the user stack: here, not on the BPF stack (512 bytes for all calls)
	__u32 chunk_off; // chunk holds no stack (a copy failed near the stack's top: read each word)
	__u64 chunk_at;  // user address of chunk[0]; 0: nothing copied yet
	__u8 chunk[STACK_CHUNK]; // stack_u64
	// The rules of the frames walked last, by depth: a probe whose
	// stacks repeat walks them with no map lookup (rules.h: frame_slot).
	struct frame_rule fr[FRAME_RULES];
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

// Counts of the changes of proc_maps: user space raises element
// MAPS_GEN_USER after each list it writes, the programs that delete one
// (exec, exit) raise MAPS_GEN_BPF, atomically (two elements, so that
// neither writer overwrites the other's count).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} maps_gen SEC(".maps");

// The GoStack of each Go binary loaded (MAPPING_GO mappings index it).
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_GO_STACKS);
	__type(key, __u32);
	__type(value, struct go_stack);
} go_stacks SEC(".maps");

// Table storage: one u32 space in shards of SHARD_U32S elements, created
// by the loader as tables need them (unwind_shards[i] holds elements
// i*SHARD_U32S..; max_entries set by the loader from the table budget).
// Each table's page index and entries lie one after the other in it (at
// pages_off, entries_off; the entries padded, see find_rule); rules are
// shared (unwind.RuleSet). All shards have one size, so the verifier
// inlines the lookups. A shard's values are chunks of 16 elements: an
// array map rounds each value up to 8 bytes, so u32 values took twice
// their size, and a shard is mmapable, its elements in order, which the
// loader writes with one copy (libLLVM's 3.3 MB in ~1 ms) rather than a
// batch update of its elements (89 ms).
#define SHARD_U32S (1 << SHARD_SHIFT) // 256 KiB per shard
#define CHUNK_SHIFT 4
#define CHUNK_U32S (1 << CHUNK_SHIFT)

struct unwind_shard {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SHARD_U32S / CHUNK_U32S);
	__type(key, __u32);
	// Page index elements, or u16 pc_low | u16 rule << 16. An array type:
	// clang 14 writes a struct reached only through this pointer as a
	// forward declaration, without its size.
	__type(value, __u32[CHUNK_U32S]);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__array(values, struct unwind_shard);
} unwind_shards SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_RULES);
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
//
// It runs at every event: KREAD's plain loads, where the probe reads of
// the legacy build took ~100 ns of the uprobe program's time on the malloc
// benchmark (10-capture.sh).
static __always_inline void uretprobe_init(struct unwind_state *s)
{
	struct task_struct *task = current_task();
	struct uprobe_task *ut = KREAD(task, utask);

	s->tramp = 0;
	s->ri = ut ? (__u64)KREAD(ut, return_instances) : 0;
	if (s->ri) {
		struct mm_struct *mm = KREAD(task, mm);
		struct xol_area *xol = mm ? KREAD(mm, uprobes_state.xol_area) : NULL;
		s->tramp = xol ? KREAD(xol, vaddr) : 0;
	}
}

#endif
