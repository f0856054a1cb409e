// Shared between probee.bpf.c and the Go loader (through bpf2go -type).
#ifndef PROBEE_H
#define PROBEE_H

#include <linux/types.h>

// Every value user space shares with the programs is an enumerator here:
// bpf2go -type (bpf/gen.go) emits each enum as Go constants, e.g.
// probeeLimitMAX_USTACK, which the bpf package uses, so the two sides
// cannot drift; bpf/consts_test.go compares the copies of the packages
// that must not import bpf (unwind, output, bpf/wire) with the object's
// BTF. A new shared enum goes in struct probee_enums below and in gen.go's
// -type list. What user space never sees stays a #define in the header
// that uses it. Enumerators are ints, as the #defines were.

// Sizes: elements of an array or a map.
enum limit {
	MAX_STACK = 127,       // kernel stacks (the kernel's perf_event_max_stack default)
	MAX_USTACK = 256,      // user stacks; a power of two (indexes are masked)
	USTACK_SHORT_PCS = 48, // pcs of a short user stack (enum ustack_class)
	USTACK_MID_PCS = 112,  // pcs of a mid-depth one
	MAX_PROBES = 1024,
	MAX_MAPPINGS = 256,    // executable mappings per process; a power of two
	FILE_SEGS = 4,         // executable segments per file with their own offset-to-vaddr delta
	COUNTS_SLOTS = 64,     // counts gate slots; a power of two; CPUs beyond it share slots
	LAT_DEPTH = 32,        // calls in flight per thread or goroutine; a power of two
	HIST_BUCKETS = 64,     // log2 buckets of a probe's histogram
	SHARD_SHIFT = 16,      // a table storage shard holds 1 << SHARD_SHIFT u32s (unwind_maps.h)
	MAX_RULES = 1 << 14,   // distinct unwind rules (unwind_rules)
	MAX_GO_STACKS = 256,   // Go binaries whose stacks that grow are followed (go_stacks)
};

// Depths of the DWARF walk (unwind.h), in frames.
enum walk_depth {
	STEP_FRAMES = 8,     // frames per tail-called step program
	MAX_TAIL_CALLS = 32, // the kernel allows 33 (32 before 5.17)
	INLINE_FRAMES = 24,  // the no-bpf_loop inline path (verifier-bound)
	MAX_STACK_SWITCHES = 2, // steps of a frame-pointer walk down to another stack (fpstack.h)
};

// Bits 32+ of a probe's BPF cookie (bits 0-31: the probe id).
enum cookie_bit {
	COOKIE_ENTRY = 1,      // at a function's first instruction, or a RET: the return address at [rsp]
	COOKIE_GO = 2,         // a Go function: ABIInternal registers, paired by goroutine (latency.h)
	COOKIE_RET_INSN = 4,   // on a RET instruction: rsp still points at the return address
	COOKIE_SIZE_SHIFT = 40, // bits 40-63 (of the cookie): a Go function's size (0: unknown)
};

// How user stacks are walked (rodata unwind_mode).
enum unwind_strategy { UNWIND_FP = 0, UNWIND_DWARF = 1 };

// Indexes in the kprobe-typed prog array of step programs (uprobe and
// kprobe programs share it: both are BPF_PROG_TYPE_KPROBE with no
// expected attach type).
enum step_index { STEP_UPROBE = 0, STEP_KPROBE = 1 };

// Elements of maps_gen (unwind_maps.h).
enum maps_gen_index { MAPS_GEN_USER = 0, MAPS_GEN_BPF = 1 };

// What function probes count (rodata measure_mode, latency.h).
enum measure_kind { MEASURE_COUNT = 0, MEASURE_LATENCY = 1, MEASURE_WEIGHT = 2 };

// --off-cpu: a thread's state when it left the CPU (offcpu.h), counted
// under probe id offcpu_probe + state.
enum offcpu_state {
	OFFCPU_SLEEP = 0,           // interruptible sleep (S)
	OFFCPU_UNINTERRUPTIBLE = 1, // uninterruptible (D): I/O, some locks
	OFFCPU_PREEMPTED = 2,       // runnable, waiting for a CPU
	OFFCPU_STOPPED = 3,         // stopped or traced (T, t)
	OFFCPU_STATES = 4,
};

// What happened to calls that were not timed, per probe
// (probe_measure.stats).
enum lat_untimed {
	LAT_UNWOUND = 0,   // never returned: an outer frame returned or was entered again
	LAT_EXITED = 1,    // the thread exited with the call in flight
	LAT_UNMATCHED = 2, // a return without its entry
	LAT_TOO_DEEP = 3,  // entered with LAT_DEPTH calls in flight
	LAT_NO_ROOM = 4,   // lat_stacks full
	LAT_STAT_MAX = 5,
};

// user_stack.flags.
enum stack_flag {
	STACK_TRUNCATED = 1,
	STACK_EXITING = 2, // a walk cut in an exiting task (its memory is being unmapped): not partial
	STACK_IN_EXEC = 4, // taken inside execve: no user stack (old registers, maybe new memory)
};

// The value of a tgid in the pids filter map (maps.h).
enum pid_flag {
	PID_TRACED = 1,    // user space adds a tgid with this value, a traced parent its children
	PID_ANNOUNCED = 2, // the tgid is in seen
	PID_EXITED = 4,    // the process's last thread began to exit (probee.bpf.c)
};

enum drop_cause {
	DROP_COUNTS_FULL = 0,     // counts map full
	DROP_USTACK_FULL = 1,     // user stack map full
	DROP_USTACK_COLLISION = 2,// two user stacks with one hash
	DROP_KSTACK_ERROR = 3,    // bpf_get_stack failed
	DROP_KSTACK_COLLISION = 4,// two kernel stacks with one hash
	DROP_EVENT_LOST = 5,      // ring buffer full: a process notice was lost
	DROP_NO_TABLES = 6,       // DWARF mode: process had no unwind tables yet (FP walk used)
	DROP_UNKNOWN_PC = 7,      // DWARF mode: stack cut at a pc outside every known mapping
	DROP_COUNTS_SWITCH = 8,   // --interval: counts map switched twice during one event
	DROP_KSTACK_FULL = 9,     // kernel stack map full
	DROP_DEFER_LOST = 10,     // a stack to complete in user space did not fit the deferred ring
	DROP_CUT = 11,            // DWARF mode: stack cut where its rules could not be followed
	DROP_OFFCPU_FULL = 12,    // --off-cpu: no room for a thread's switch-out (offcpu_starts full)
	DROP_WAKERS_FULL = 13,    // --wakers: no room for a wake-up's stacks (wake_joins full)
	DROP_MAX = 14,
};

enum event_type {
	EVENT_NEW_PROCESS = 1,
	EVENT_EXIT = 2,
	EVENT_GATE = 3, // a traced command reached its entry point and was stopped (SIGSTOP)
};

struct event {
	__u32 type;
	__u32 tgid;
	__u32 pid;
	__u32 ppid; // EVENT_NEW_PROCESS: the parent's tgid (a forked child has its mappings)
	__u64 when; // EVENT_GATE: the stop's time (bpf_ktime_get_ns), part of its hold_key
};

// A process a gate stopped and user space has not resumed yet (stopgate.h):
// the thread that stopped it and when, so that a later stop of the same
// process is another key.
struct hold_key {
	__u32 tgid;
	__u32 tid;
	__u64 when;
};

// The counts gate (--interval): which counts map events go to, and per CPU
// slot how many events are using each map right now. One 64-byte line per
// slot; user space maps it and reads it with atomics.
// Keys the programs added to the kernel maps, counted in each slot (user
// space sums the slots, bpf/gate.go): a drain comes early when the maps
// fill faster than --interval empties them. By enum added_kind.
// User stacks count by class: ADDED_USTACKS - 1 + enum ustack_class.
enum added_kind { ADDED_COUNTS = 0, ADDED_KSTACKS = 1, ADDED_USTACKS = 2, ADDED_KINDS = 5 };
struct counts_slot {
	__u64 busy[2];
	__u64 added[6];
};
struct counts_gate {
	__u32 active;
	__u32 pad[15];
	struct counts_slot slots[COUNTS_SLOTS];
};

struct count_key {
	__u32 probe;
	__u32 tgid;
	__u64 ustack; // key in ustacks, 0 when lost
	__u64 kstack; // key in kstacks, 0 when none or lost
	char comm[16];
};

// --wakers: who woke a wait (offcpu.h). The wait's kernel stack hash is
// replaced by the hash of this join, which user space resolves into one
// stack: the wait's kernel stack, then the waker's stacks.
struct wake_join {
	__u64 blocked; // the woken thread's kernel stack at its switch-out
	__u64 ustack;  // the waker's user stack (0: none)
	__u64 kstack;  // the waker's kernel stack
	__u32 tgid;    // the waker's
	__u32 pad;
	char comm[16]; // the waker thread's
};

// --wakers: the walk of a waker's stacks in progress on a CPU (offcpu.h).
struct waker_walk {
	__u32 tid;   // the thread it woke
	__u32 pad;
	__u64 since; // bpf_ktime_get_ns when it began; 0: none
};

// A thread's switch-out, until it runs again (offcpu.h).
struct offcpu_start {
	struct count_key key; // probe: offcpu_probe + enum offcpu_state
	__u64 start;          // bpf_ktime_get_ns at the switch-out; 0: none open (it ran again)
};

struct user_stack {
	__u64 hash;
	__u32 len;
	__u32 flags;
	__u64 pcs[MAX_USTACK];
};

// User stacks are stored by depth class, each class in its own map whose
// elements hold that many pcs: a hash map element is allocated (zeroed) and
// copied whole when a new stack is stored, and a 256-pc element takes a
// 4 KiB allocation; a short one takes 512 bytes (48 pcs) or 1 KiB (112 pcs:
// an element is the value, its 8-byte key and ~80 bytes of the kernel's).
// The class is the low two bits of a stored stack's key (USTACK_*), the
// rest its hash. Same header as user_stack.
enum ustack_class { USTACK_SHORT = 1, USTACK_MID = 2, USTACK_DEEP = 3 };
struct ustack_short {
	__u64 hash;
	__u32 len;
	__u32 flags;
	__u64 pcs[USTACK_SHORT_PCS];
};
struct ustack_mid {
	__u64 hash;
	__u32 len;
	__u32 flags;
	__u64 pcs[USTACK_MID_PCS];
};

// Kernel stacks, deduplicated like user stacks (same header: hash, len,
// flags), so periodic drains can delete them (ids of a stack trace map are
// buckets, which collide).
struct kernel_stack {
	__u64 hash;
	__u32 len;
	__u32 flags;
	__u64 pcs[MAX_STACK];
};

// Unwind tables (layout in unwind/doc.go, storage in bpf/doc.go).
// unwind_mapping.flags and file_table.flags; 0 means walk frame pointers.
// Above MAPPING_TAG_SHIFT a table's flags carry its placement tag: 0 for
// a table in storage no table used before, another for each table placed
// where released ones lay (bpf/tables.go; rules.h: table_tag).
enum mapping_flag {
	MAPPING_TABLE = 1, // the file has a DWARF table
	MAPPING_GO = 2,    // a Go binary (no table); entries_off indexes go_stacks
	MAPPING_TAG_SHIFT = 8,
};

// Where the walk of a Go binary goes on from runtime.morestack (see
// unwind.GoStack): at the return address ret (an ELF virtual address) the
// current g is at fsbase + tls, and the goroutine whose stack grows is
// g.m.curg, its pc, sp and rbp in its g.sched.
struct go_stack {
	__u64 ret;
	__s64 tls;
	__u32 g_m, m_curg;
	__u32 sched_pc, sched_sp, sched_bp;
	__u32 pad;
};

struct unwind_rule {
	__u8 cfa_type;
	__u8 rbp_type;
	__u8 plt_threshold;
	__s8 rbx_slot; // the caller's rbx is at cfa + 8 * rbx_slot (0: not saved here)
	__s32 cfa_offset;
	__s32 rbp_offset;
};

enum cfa_type {
	CFA_NONE = 0, CFA_RSP = 1, CFA_RBP = 2, CFA_PLT = 3,
	CFA_SIGNAL = 4, CFA_UNSUPPORTED = 5, CFA_END = 6,
	CFA_RSP_RET_RDI = 7, // cfa = rsp + offset, return address in rdi (glibc's vfork): first frame only
	CFA_RBX = 8,         // cfa = rbx + offset (ld.so's lazy-binding trampolines)
	CFA_REG = 9,         // cfa = the register numbered plt_threshold (DWARF) + offset: first frame only
};

enum rbp_type { RBP_SAME = 0, RBP_OFFSET = 1, RBP_UNDEFINED = 2 };

// One executable mapping of a process. table_pc = pc - bias.
struct unwind_mapping {
	__u64 start;
	__u64 end;
	__u64 bias;        // load bias + Table.Base
	__u32 pages_off;   // index of the table's Pages[0] in the table storage (unwind_shards)
	__u32 npages;      // the table has npages+1 page index elements
	__u32 entries_off; // index of the table's Entries[0] in the table storage
	__u32 flags;       // MAPPING_TABLE and its tag; MAPPING_GO; 0 means walk frame pointers here
};

// A file's identity as the kernel sees it through a mapping's vm_file
// (and as /proc/PID/maps and perf's MMAP2 records print it): the device
// number of its superblock (MKDEV: major << 20 | minor) and its inode.
struct file_key {
	__u64 dev;
	__u64 ino;
};

// The file_tables key of the vDSO (no file; dev_t is 32 bits, so no file
// has this device): vdsoKey in filetables.go.
// An enumerator is an int: -1 converts to the u64 of every bit set.
enum vdso_key { VDSO_KEY_DEV = -1 };

// File offsets [off, end) of one executable segment: ELF vaddr = offset + delta.
struct file_seg {
	__u64 off;
	__u64 end;
	__u64 delta;
};

// The unwind table of one file, shared by every process that maps it: a
// pc in a mapping of the file is unwound without any per-process
// registration (bpf_find_vma finds the mapping, vma.h).
struct file_table {
	__u64 base;        // Table.Base
	__u32 pages_off;   // as in unwind_mapping
	__u32 npages;
	__u32 entries_off;
	__u32 flags;       // MAPPING_TABLE: 0 means walk frame pointers here (Go, no CFI)
	__u32 nsegs;
	__u32 pad;
	struct file_seg segs[FILE_SEGS];
};

#define DEFER_STACK_MAX 28672 // bytes of stack a deferred stack carries (the record stays under the 32 KiB of a per-CPU map value)

// A stack the kernel could not finish because a frame lies in a file whose
// unwind table is not loaded yet (a binary the machine runs for the first
// time): the frames unwound so far, the registers at that frame and a copy
// of the stack above it, completed in user space once the table is built
// (defer.h, package proctrack). Sent packed: the header, then the npcs
// pcs, then the len bytes of stack, so that a shallow stack takes little
// of the ring.
struct deferred_stack {
	struct count_key key; // probe, tgid, kstack, comm (ustack unused)
	__u32 pid;
	__u32 npcs;   // frames unwound before ip: the first npcs*8 bytes of tail
	__u64 ip, sp, bp;
	__u32 exact;  // ip is not a return address (the first frame)
	__u32 len;    // bytes of stack copied from sp, in tail after the pcs
	__u32 ppid;   // the parent's tgid: a child forked before its first event has its mappings
	__u32 pad;
	// The interrupted registers by DWARF number (npcs 0: ip is that
	// frame), with rbx as the frame at ip has it.
	__u64 gpr[16];
	__u8 tail[MAX_USTACK * 8 + DEFER_STACK_MAX];
};

// A process's executable mappings, sorted by start.
struct proc_info {
	__u32 n;
	__u32 pad;
	struct unwind_mapping maps[MAX_MAPPINGS];
};

// One field of each enum user space reads, so that they are in the BTF
// bpf2go -type reads (enums of constants only are not): probee.bpf.c
// declares an unused pointer to it.
struct probee_enums {
	enum limit limit;
	enum walk_depth walk_depth;
	enum cookie_bit cookie_bit;
	enum unwind_strategy unwind_strategy;
	enum step_index step_index;
	enum maps_gen_index maps_gen_index;
	enum measure_kind measure_kind;
	enum offcpu_state offcpu_state;
	enum lat_untimed lat_untimed;
	enum stack_flag stack_flag;
	enum pid_flag pid_flag;
	enum drop_cause drop_cause;
	enum event_type event_type;
	enum added_kind added_kind;
	enum ustack_class ustack_class;
	enum mapping_flag mapping_flag;
	enum cfa_type cfa_type;
	enum rbp_type rbp_type;
	enum vdso_key vdso_key;
};

#endif
