// The state of a user-stack walk (unwind.h), kept in a per-CPU slot per
// context kind (unwind_states, unwind_maps.h) so that it survives tail
// calls.
#ifndef PROBEE_UNWIND_STATE_H
#define PROBEE_UNWIND_STATE_H

#include <linux/types.h>
#include "probee.h"

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

#endif
