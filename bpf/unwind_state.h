// The state of a user-stack walk (unwind.h), kept in a per-CPU slot per
// context kind (unwind_states, unwind_maps.h) so that it survives tail
// calls.
#ifndef PROBEE_UNWIND_STATE_H
#define PROBEE_UNWIND_STATE_H

#include <linux/types.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probee.h"
#include "stackstore.h"
#include "uretprobe.h"

// rbx of user registers: bpf_tracing.h has no accessor for it.
#if defined(__KERNEL__) || defined(__VMLINUX_H__)
#define PT_REGS_BX(x) (__PT_REGS_CAST(x)->bx)
#else
#define PT_REGS_BX(x) (__PT_REGS_CAST(x)->rbx)
#endif

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
	__u32 check; // frame_check(key, r) ^ the table's tag: a slot written halfway is a miss
};

// The event a walk is for.
struct walk_event {
	struct count_key key; // its count key (ustack set when the walk ends)
	__u32 slot;           // the context kind's slot (enum unwind_slot)
	__u32 entry;          // the event is at a function's first instruction
};

// The frame the walk is at: its registers, as far as the walk knows them.
struct walk_frame {
	__u64 ip, sp, bp;
	__u64 bx_at;    // where the frame's rbx was saved: the last slot a callee's rule named (0: rbx is gpr's)
	__u32 exact;    // ip is not a return address (first frame, signal frames)
	__u32 go_entry; // go_switch_step moved to a Go function that has not pushed rbp: its caller is at [rsp]
};

// How the walk goes: what it used up, and why its stack may be incomplete
// (unwind_finish counts it by these).
struct walk_status {
	__u32 calls;    // tail calls made
	__u32 switches; // frame-pointer steps down to another stack (fp_step)
	__u32 partial;  // a frame was in a file whose table is not loaded
	__u32 busy;     // bpf_find_vma failed (interrupt context): cut, to be finished in user space
	__u32 unknown;  // cut at a pc no mapping holds
};

// Where user space takes a deferred walk over (defer.h): the first frame
// in a file whose table is not loaded (set once status.partial is).
struct defer_point {
	struct walk_frame at; // its registers
	__u32 npcs;           // frames before it
};

// The mapping bpf_find_vma found last (vma.h).
struct vma_cache {
	struct unwind_mapping m;
	__u32 ok; // m holds it
};

// The walk's copy of the user stack (unwind.h: stack_u64).
struct stack_copy {
	__u64 at;     // user address of buf[0]; 0: nothing copied yet
	__u32 direct; // buf holds no stack (a copy failed near the stack's top): read each word
	__u64 word;   // a word read from the user stack: here, not on the BPF stack (512 bytes for all calls)
	__u8 buf[STACK_CHUNK];
};

// The last two mappings of the process's list (proc_maps) a walk found,
// most recent first: a walk goes back and forth between a few files (libc,
// the program), and each frame found here skips a hash lookup and a
// binary search (mappings.h: known_mapping). They outlive the walk: the
// slot's next event keeps them when it is the same process's and no list
// changed in between (mappings_keep).
struct mapping_cache {
	struct unwind_mapping recent[2];
	__u32 n;         // recent[0..n) are set
	__u32 list_tgid; // whose list proc_list chose (0: not yet; NO_LIST: none)
	__u32 tgid;      // the process they were found for (0: none)
	__u64 gen[2];    // maps_gen when they were
};

// A walk's state. unwind_reset starts a walk, and is the one place that
// does: it sets ev, cur, gpr, status and uret whole, empties st, and
// drops what the caches vma and stack hold (by their keys: their buffers
// are big); the walk sets defer at its first frame without a table. The
// caches mappings and last_rules are kept from walk to walk.
struct unwind_state {
	struct walk_event ev;
	struct walk_frame cur; // the frame being unwound
	// The interrupted frame's general registers by DWARF number (enum
	// dwarf_reg): for its CFA_REG and CFA_RSP_RET_RDI rules, rax for
	// syscall_gap_step, rbx for frame_rbx (the frame's rbx unless
	// cur.bx_at is set).
	__u64 gpr[16];
	struct walk_status status;
	struct uretprobes uret;
	struct user_stack st; // the stack being built
	struct vma_cache vma;
	struct stack_copy stack;
	struct defer_point defer;
	// Kept from walk to walk:
	struct mapping_cache mappings;
	// The rules of the frames walked last, by depth: a probe whose
	// stacks repeat walks them with no map lookup (rules.h: frame_slot).
	struct frame_rule last_rules[FRAME_RULES];
};

// save_gprs copies user registers r to g by DWARF number (unwind_state.gpr).
static __always_inline void save_gprs(__u64 *g, struct pt_regs *r)
{
	g[0] = PT_REGS_RC(r);
	g[1] = PT_REGS_PARM3(r); // rdx
	g[2] = PT_REGS_PARM4(r); // rcx
	g[3] = PT_REGS_BX(r);
	g[4] = PT_REGS_PARM2(r); // rsi
	g[5] = PT_REGS_PARM1(r); // rdi
	g[6] = PT_REGS_FP(r);
	g[7] = PT_REGS_SP(r);
	g[8] = __PT_REGS_CAST(r)->r8;
	g[9] = __PT_REGS_CAST(r)->r9;
	g[10] = __PT_REGS_CAST(r)->r10;
	g[11] = __PT_REGS_CAST(r)->r11;
	g[12] = __PT_REGS_CAST(r)->r12;
	g[13] = __PT_REGS_CAST(r)->r13;
	g[14] = __PT_REGS_CAST(r)->r14;
	g[15] = __PT_REGS_CAST(r)->r15;
}

// unwind_reset starts a walk in s: of the event k, in slot, from the user
// registers regs (entry: at a function's first instruction).
static __always_inline void unwind_reset(struct unwind_state *s, struct count_key *k, __u32 slot,
					 struct pt_regs *regs, int entry)
{
	s->ev = (struct walk_event){.key = *k, .slot = slot, .entry = entry};
	s->cur = (struct walk_frame){
		.ip = PT_REGS_IP(regs), .sp = PT_REGS_SP(regs), .bp = PT_REGS_FP(regs), .exact = 1,
	};
	save_gprs(s->gpr, regs);
	s->status = (struct walk_status){};
	uretprobe_init(&s->uret);
	s->st.len = 0;
	s->st.flags = 0;
	s->st.hash = HASH_SEED;
	s->vma.ok = 0;
	s->stack.at = 0;
	s->stack.direct = 0;
}

#endif
