// DWARF unwinding of user stacks in BPF, from the compact tables of package
// unwind (byte layout in unwind/doc.go; map storage in bpf/doc.go).
//
// One frame step: find the pc's mapping in the process's sorted mapping array
// (proc_maps, keyed by tgid), look the table pc up in the binary's page index
// and entries (pc-1 for return addresses), compute the CFA from the rule
// (rsp, rbp, PLT or signal frame), read the return address at CFA-8 and rbp
// by its rule. Mappings without a table take a frame-pointer step. The
// state is in unwind_state.h, the maps in unwind_maps.h, the lookups of
// a pc's mapping in mappings.h and vma.h, of its rule in rules.h.
//
// The walk state lives in a per-CPU slot per context kind (a perf sample can
// interrupt an in-flight uprobe unwind), so it survives tail calls: each step
// program does STEP_FRAMES frames and tail-calls itself, up to the kernel's
// limit; the inline path runs the same step in bpf_loop (or, with no
// bpf_loop, a bounded loop of INLINE_FRAMES).
#ifndef PROBEE_UNWIND_H
#define PROBEE_UNWIND_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "stackstore.h"
#include "unwind_state.h"
#include "unwind_maps.h"
#include "uretprobe.h"
#include "mappings.h"
#include "vma.h"
#include "rules.h"

enum step_result { STEP_CONTINUE = 0, STEP_END = 1, STEP_CUT = 2 };

// push appends the current pc to the stack.
static __always_inline int push(struct unwind_state *s)
{
	__u32 n = s->st.len;

	if (n >= MAX_USTACK)
		return STEP_CUT;
	s->st.pcs[n & (MAX_USTACK - 1)] = s->cur.ip;
	s->st.hash = mix(s->st.hash, s->cur.ip);
	s->st.len = n + 1;
	return STEP_CONTINUE;
}

// move_to makes (ra, cfa) the next frame, replacing a uretprobe trampoline
// return address by the real one.
static __always_inline int move_to(struct unwind_state *s, __u64 ra, __u64 cfa)
{
	if (s->uret.tramp && ra == s->uret.tramp)
		ra = real_return(&s->uret, cfa - 8);
	if (ra == 0)
		return STEP_END;
	if (cfa <= s->cur.sp || !user_pc(ra))
		return STEP_CUT;
	s->cur.ip = ra;
	s->cur.sp = cfa;
	s->cur.exact = 0;
	return STEP_CONTINUE;
}

// stack_u64 reads the word at addr of the user stack: from the chunk copied
// last when it holds addr, else from a new chunk copied at addr (the walk
// goes up the stack), else directly.
static __always_inline int stack_u64(struct unwind_state *s, __u64 addr, __u64 *v)
{
	__u64 off = addr - s->stack.at;

	if (s->stack.direct)
		return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
	if (!s->stack.at || addr < s->stack.at || off > STACK_CHUNK - sizeof(*v)) {
		if (bpf_probe_read_user(s->stack.buf, STACK_CHUNK, (void *)addr)) {
			s->stack.direct = 1; // past the chunk, the stack ends
			return bpf_probe_read_user(v, sizeof(*v), (void *)addr);
		}
		s->stack.at = addr;
		off = 0;
	}
	if (off > STACK_CHUNK - sizeof(*v))
		return -1;
	*v = *(__u64 *)&s->stack.buf[off];
	return 0;
}

// fp_step moves to the caller by the frame pointer. A frame whose saved
// rbp points below it is on another stack (see MAX_STACK_SWITCHES): the
// walk goes on there, up to that many times.
static __always_inline int fp_step(struct unwind_state *s)
{
	if (!s->cur.bp)
		return STEP_END;
	if (!user_pc(s->cur.bp)) // no frame's address (argc, left in rbp by code without frame pointers): reading it would fault
		return STEP_CUT;
	__u64 cfa = s->cur.bp + 16;
	if (stack_u64(s, cfa - 8, &s->stack.word)) // the return address
		return STEP_CUT;
	__u64 ra = s->stack.word;
	if (stack_u64(s, cfa - 16, &s->cur.bp)) // the saved rbp
		return STEP_CUT;
	if (cfa < s->cur.sp) {
		if (s->status.switches >= MAX_STACK_SWITCHES)
			return STEP_CUT;
		s->status.switches++;
		s->cur.sp = 0; // another stack: any cfa is above this one
	}
	return move_to(s, ra, cfa);
}

// frame_rbx reads the current frame's rbx: from the slot where the last
// callee that saved rbx put it, else the interrupted rbx (no callee
// changed it).
static __always_inline int frame_rbx(struct unwind_state *s, __u64 *v)
{
	if (!s->cur.bx_at) {
		*v = s->gpr[DW_RBX];
		return 0;
	}
	return stack_u64(s, s->cur.bx_at, v);
}

static __always_inline int signal_step(struct unwind_state *s)
{
	__u64 sc[3] = {}; // rbp at +120, rsp at +160, rip at +168

	if (bpf_probe_read_user(&sc[0], 8, (void *)(s->cur.sp + 120)) ||
	    bpf_probe_read_user(&sc[1], 16, (void *)(s->cur.sp + 160)))
		return STEP_CUT;
	s->cur.bx_at = s->cur.sp + 128; // sigcontext's rbx (unwind.SigcontextRBX)
	s->cur.bp = sc[0];
	s->cur.sp = sc[1];
	s->cur.ip = sc[2];
	s->cur.exact = 1;
	return user_pc(s->cur.ip) ? STEP_CONTINUE : STEP_CUT;
}

static __always_inline int rule_step(struct unwind_state *s, struct unwind_rule *r)
{
	__u64 cfa, ra = 0;

	switch (r->cfa_type) {
	case CFA_RSP:
		cfa = s->cur.sp + (__s64)r->cfa_offset;
		break;
	case CFA_RBP:
		cfa = s->cur.bp + (__s64)r->cfa_offset;
		break;
	case CFA_PLT:
		cfa = s->cur.sp + (__s64)r->cfa_offset;
		if ((s->cur.ip & 15) >= r->plt_threshold)
			cfa += 8;
		break;
	case CFA_RSP_RET_RDI:
		if (s->st.len != 1) // only the interrupted frame's rdi is known
			return STEP_CUT;
		cfa = s->cur.sp + (__s64)r->cfa_offset;
		ra = s->gpr[DW_RDI];
		break;
	case CFA_RBX:
		if (frame_rbx(s, &s->stack.word))
			return STEP_CUT;
		cfa = s->stack.word + (__s64)r->cfa_offset;
		break;
	case CFA_REG: // a stack probe loop's r11, OpenSSL's rax...
		if (s->st.len != 1) // only the interrupted frame's registers are known
			return STEP_CUT;
		cfa = s->gpr[r->plt_threshold & 15] + (__s64)r->cfa_offset;
		break;
	case CFA_SIGNAL:
		return signal_step(s);
	case CFA_END:
		return STEP_END;
	default:
		return STEP_CUT;
	}
	if (r->rbx_slot)
		s->cur.bx_at = cfa + 8 * (__s64)r->rbx_slot;
	if (r->cfa_type != CFA_RSP_RET_RDI) {
		if (stack_u64(s, cfa - 8, &s->stack.word))
			return STEP_CUT;
		ra = s->stack.word;
	}
	if (r->rbp_type == RBP_OFFSET) {
		if (stack_u64(s, cfa + (__s64)r->rbp_offset, &s->cur.bp))
			return STEP_CUT;
	} else if (r->rbp_type == RBP_UNDEFINED) {
		s->cur.bp = 0;
	}
	if (r->cfa_type == CFA_RSP_RET_RDI && cfa == s->cur.sp)
		s->cur.sp = cfa - 1; // the return address was popped: the CFA may be rsp itself, which move_to's progress check refuses
	return move_to(s, ra, cfa);
}

// entry_step takes the caller of a function stopped at its first
// instruction from [rsp] (rbp still belongs to the caller).
static __always_inline int entry_step(struct unwind_state *s)
{
	if (stack_u64(s, s->cur.sp, &s->stack.word))
		return STEP_CUT;
	return move_to(s, s->stack.word, s->cur.sp + 8);
}

// after_syscall reports whether the instruction before s->cur.ip is syscall
// (0f 05).
static __always_inline int after_syscall(struct unwind_state *s)
{
	s->stack.word = 0;
	return !bpf_probe_read_user(&s->stack.word, 2, (void *)(s->cur.ip - 2)) && s->stack.word == 0x050f;
}

// syscall_gap_step moves to the caller of a first frame stopped right
// after a syscall instruction that its file's table does not cover:
// glibc's clone and clone3 end their FDE before the syscall, since the
// child's unwind information would be wrong there. The parent (in the
// system call, rax -ENOSYS, or back from it) pushed nothing: its caller is
// at [rsp]. A new child (rax 0, on its new stack) is the outermost frame.
static __always_inline int syscall_gap_step(struct unwind_state *s)
{
	return s->gpr[DW_RAX] ? entry_step(s) : STEP_END;
}

// go_switch_step goes on from Go's runtime.morestack, where a stack taken
// on the system stack (runtime.newstack) ends, to the goroutine whose
// stack grows (unwind.GoStack): the function that called morestack, at
// the pc, sp and rbp its g.sched holds. STEP_END when that is not the
// case (not after the call of newstack, or a read failed).
#ifndef PROBEE_LEGACY
static __always_inline int go_switch_step(struct unwind_state *s, struct unwind_mapping *m)
{
	__u32 i = m->entries_off;
	struct go_stack *gs = bpf_map_lookup_elem(&go_stacks, &i);
	__u64 g = 0, sched[3] = {}; // pc, sp, bp

	if (!gs || s->cur.ip - m->bias != gs->ret)
		return STEP_END;
	__u64 fs = KREAD(current_task(), thread.fsbase);
	if (bpf_probe_read_user(&g, sizeof(g), (void *)(fs + gs->tls)) ||  // g0
	    bpf_probe_read_user(&g, sizeof(g), (void *)(g + gs->g_m)) ||    // its m
	    bpf_probe_read_user(&g, sizeof(g), (void *)(g + gs->m_curg)) || // the goroutine
	    bpf_probe_read_user(&sched[0], 8, (void *)(g + gs->sched_pc)) ||
	    bpf_probe_read_user(&sched[1], 8, (void *)(g + gs->sched_sp)) ||
	    bpf_probe_read_user(&sched[2], 8, (void *)(g + gs->sched_bp)))
		return STEP_END;
	if (!user_pc(sched[0]) || !sched[1])
		return STEP_END;
	s->cur.ip = sched[0];
	s->cur.sp = sched[1];
	s->cur.bp = sched[2];
	s->cur.exact = 0; // a return address (after its call of morestack)
	s->cur.go_entry = 1;
	return STEP_CONTINUE;
}
#endif

// at_entry reports whether the current frame's function has pushed
// nothing yet: a probe at its first instruction, or the function
// go_switch_step moved to (once).
static __always_inline int at_entry(struct unwind_state *s, int first)
{
#ifndef PROBEE_LEGACY // a flag read at every frame: more paths than 5.10's verifier takes
	if (s->cur.go_entry) {
		s->cur.go_entry = 0;
		return 1;
	}
#endif
	return first && s->ev.entry;
}

// no_rule_step moves to the caller of a pc without a DWARF rule.
static __always_inline int no_rule_step(struct unwind_state *s, struct unwind_mapping *m, int first)
{
	if (at_entry(s, first))
		return entry_step(s);
#ifndef PROBEE_LEGACY // its walk checked per call took 5.10's verifier past 1M instructions
	if (m->flags & MAPPING_GO) {
		int r = fp_step(s);
		return r == STEP_CONTINUE ? r : go_switch_step(s, m);
	}
#endif
	return fp_step(s);
}

// unwind_step records the current frame and moves to its caller: by the
// pc's DWARF rule where its file has a table, else from [rsp] at a
// function's entry or by frame pointers (JIT code, Go, tables not loaded
// or too big); the next frame with a table is unwound by DWARF again.
static __always_inline int unwind_step(struct unwind_state *s)
{
	int first = s->st.len == 0;
	__u64 hash = s->st.hash;

	if (push(s))
		return STEP_CUT;
	struct unwind_mapping *m = known_mapping(s);
	if (!m)
		m = vma_mapping(s);
	if (!m) {
		if (s->status.unknown && !first) { // in the heap or the stack: not a frame
			s->st.len--;
			s->st.hash = hash;
		}
		s->status.unknown = !s->status.busy; // counted when the walk ends (unwind_finish)
		return STEP_CUT;
	}
	if (!(m->flags & MAPPING_TABLE))
		return no_rule_step(s, m, first);
	__u64 tpc = s->cur.ip - m->bias - (s->cur.exact ? 0 : 1);
	struct unwind_rule *r = find_rule(s, m, tpc);
	// One register for r from here. clang knows a rule in the walk state
	// (find_rule) is not NULL: it tested one register and, on the NULL
	// branch, kept r as 0 in another. 6.1's verifier does not decide a
	// NULL test of a pointer into the state (a global function's
	// argument), so it followed that branch and refused the load through
	// the other register.
	barrier_var(r);
	if (!r && first && after_syscall(s))
		return syscall_gap_step(s);
	if (!r) // code its table does not cover (V8's embedded builtins in node)
		return no_rule_step(s, m, first);
#ifndef PROBEE_LEGACY
	s->cur.go_entry = 0;
#endif
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
