// The DWARF walk's maps and load-time settings (see unwind.h): the walk
// state slots, the processes' mapping arrays, the table storage shards,
// the rules and their cache, the file tables, the deferred stacks' ring
// and the step programs' arrays.
#ifndef PROBEE_UNWIND_MAPS_H
#define PROBEE_UNWIND_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "maps.h"
#include "unwind_state.h"

// STEP_FRAMES, MAX_TAIL_CALLS, INLINE_FRAMES, SHARD_SHIFT, enum
// unwind_strategy, enum step_index and enum maps_gen_index are in probee.h.

// Set by the loader before load (rodata).
const volatile __u32 unwind_mode = UNWIND_FP;
const volatile __u32 use_tail_calls = 1;
const volatile __u32 have_bpf_loop = 1;
const volatile __u32 have_find_vma = 0; // the kernel has bpf_find_vma (vma.h)
const volatile __u32 defer_stacks = 0;  // hand unfinished stacks over (defer.h: DWARF with find_vma)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct unwind_state);
} unwind_states SEC(".maps");

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
ONE_STEP_ARRAY(steps_offcpu);
ONE_STEP_ARRAY(steps_waker);
// kprobe_multi programs have their own expected attach type, so their
// step program needs its own array.
ONE_STEP_ARRAY(steps_kmulti);

// A per-CPU cache of table lookups (rules.h), direct-mapped: hot code is
// walked through the same pcs event after event (a probed function's
// callers, a sampled loop), and a hit skips find_rule's binary search.
// A slot is keyed by (entries_off, tpc) and checked with the table's
// placement tag: user space places a table where released ones lay only
// with a tag of its own, so a slot names one table's pc for good (rules.h:
// table_tag). Programs of other contexts can
// interrupt an update on the same CPU (a sample during a uprobe's walk),
// so a slot's value carries a check of its key: a slot written halfway is
// a miss.
#define RULE_CACHE_BITS 12

struct rule_cache_slot {
	__u64 key; // (entries_off + 1) << 32 | tpc; 0: empty
	__u64 val; // rule | rule_check(key) << 32
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << RULE_CACHE_BITS);
	__type(key, __u32);
	__type(value, struct rule_cache_slot);
} rule_cache SEC(".maps");

// The unwind tables of files, by the identity of the mapped file (vma.h).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct file_key);
	__type(value, struct file_table);
} file_tables SEC(".maps");

// What probee_file_key found: the file_tables key of a mapped file.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct file_key);
} file_key_out SEC(".maps");

// Stacks handed to user space unfinished (defer.h).
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} deferred SEC(".maps");

// Per CPU and context kind (as unwind_states): a deferred record is built
// here, then copied into the ring cut to its stack length.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLOT_MAX);
	__type(key, __u32);
	__type(value, struct deferred_stack);
} defer_scratch SEC(".maps");

#endif
