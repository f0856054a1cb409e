//go:build ignore

// probee's capture programs. One program per context kind, each with the
// DWARF step program it tail-calls (bpf/unwind.h):
//   - probee_uprobe / probee_uprobe_multi: uprobes and uretprobes, single
//     links and uprobe_multi links;
//   - probee_kprobe / probee_kprobe_multi (kprobe.h): kprobes, kretprobes,
//     kprobe_multi;
//   - probee_tracepoint: tracepoints (the user's --tracepoint specs);
//   - probee_perf: cpu-clock sampling (--sample);
//   - probee_fork / probee_exec / probee_exit: the process lifecycle, as
//     BTF tracepoints (tp_btf), which need no tracefs mounted;
//   - probee_gate / probee_ldso_gate (stopgate.h): the start gates;
//   - probee_file_key (filekey.h): run by user space (BPF_PROG_TEST_RUN) to
//     learn the identity under which the unwinder finds a file's table.
// Every probe attach carries a cookie: bits 0-31 the probe id, bit 32 set
// when the probe sits on a function's first instruction (the caller's return
// address is then at [rsp], and rbp still belongs to the caller).
//
// Each event walks the user stack with frame pointers, deduplicates it in
// ustacks (keyed by a 64-bit hash of its pcs), takes the kernel stack with
// bpf_get_stack where the context has one (deduplicated in kstacks the same
// way), and counts the event in counts0/1 keyed by (probe, tgid, comm, user
// stack, kernel stack). Every loss is counted per CPU in drops, by cause.

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"

// rbx of user registers: bpf_tracing.h has no accessor for it.
#if defined(__KERNEL__) || defined(__VMLINUX_H__)
#define PT_REGS_BX(x) (__PT_REGS_CAST(x)->bx)
#else
#define PT_REGS_BX(x) (__PT_REGS_CAST(x)->rbx)
#endif

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

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "maps.h"

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

#define PF_EXITING 0x00000004 // as fpstack.h has it

// pid_entry_ok reports whether a pids entry lets the current task pass:
// any task, unless the process exited, then its own exiting threads only.
static __always_inline int pid_entry_ok(__u8 *v)
{
	if (!v)
		return 0;
	return !(*v & PID_EXITED) || (KREAD(current_task(), flags) & PF_EXITING);
}

// pid_traced reports whether tgid is in the pid filter (see pid_entry_ok).
static __always_inline int pid_traced(__u32 tgid)
{
	return pid_entry_ok(bpf_map_lookup_elem(&pids, &tgid));
}

static __always_inline int pid_allowed(__u32 tgid)
{
	if (!filter_pids)
		return 1;
	return pid_traced(tgid);
}

// announce tells user space the first time a tgid produces an event; 1
// when it is announced (now or before).
static __always_inline int announce(__u32 tgid, __u32 pid)
{
	__u8 one = 1;
	if (bpf_map_lookup_elem(&seen, &tgid))
		return 1;
	if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST))
		return 1; // another CPU announced it
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		bpf_map_delete_elem(&seen, &tgid); // retry on the next event
		count_drop(DROP_EVENT_LOST);
		return 0;
	}
	e->type = EVENT_NEW_PROCESS;
	e->tgid = tgid;
	e->pid = pid;
	struct task_struct *parent = KREAD(current_task(), real_parent);
	e->ppid = parent ? KREAD(parent, tgid) : 0;
	bpf_ringbuf_submit(e, 0);
	return 1;
}

// traced_pid filters an event by its tgid and announces the tgid (once):
// 0 when it is not traced. With a pid filter, the tgid's pids entry
// remembers that it was announced (PID_ANNOUNCED), which spares the
// events after the first their lookup of seen (an LRU map, the dearer
// kind; seen stays the record, read at exit).
static __always_inline int traced_pid(__u32 tgid, __u32 pid)
{
	__u8 *v = NULL;

	if (filter_pids) {
		v = bpf_map_lookup_elem(&pids, &tgid);
		if (!pid_entry_ok(v))
			return 0;
		if (*v & PID_ANNOUNCED)
			return 1;
	}
	if (announce(tgid, pid) && v)
		*v |= PID_ANNOUNCED;
	return 1;
}

// task_comm copies the current thread's name: plain loads of the BTF
// task pointer where there is one (the kernel keeps comm NUL-padded, as
// bpf_get_current_comm gives it), the helper in the legacy build.
static __always_inline void task_comm(char comm[16])
{
#ifdef PROBEE_LEGACY
	bpf_get_current_comm(comm, 16);
#else
	struct task_struct *t = current_task();
	__u64 *dst = (__u64 *)comm;

	dst[0] = *(__u64 *)&t->comm[0];
	dst[1] = *(__u64 *)&t->comm[8];
#endif
}

#include "fpstack.h"

static __always_inline void add_count_to(void *counts, struct count_key *k)
{
	__u64 one = 1;
	__u64 *v = bpf_map_lookup_elem(counts, k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(counts, k, &one, BPF_NOEXIST) == 0) {
		note_added(ADDED_COUNTS);
		return;
	}
	v = bpf_map_lookup_elem(counts, k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		count_drop(DROP_COUNTS_FULL);
}

// counts_enter marks the active counts map busy in its CPU's slot and
// returns its index (0 or 1), then checks the map is still active (user
// space writes active, then reads busy: Dekker's pattern, ordered by the
// lock-prefixed add on x86; bpf/gate.go); -1 when the gate is missing or
// the map switched twice during the event (a drop). counts_exit ends it.
// The counts maps and the measures maps (latency_maps.h) share the gate.
static __always_inline int counts_enter(struct counts_gate **gp, __u32 *slotp)
{
	__u32 zero = 0;
	struct counts_gate *g = bpf_map_lookup_elem(&counts_gate, &zero);
	if (!g)
		return -1;
	__u32 slot = bpf_get_smp_processor_id() & (COUNTS_SLOTS - 1);
	__u32 m = g->active & 1;
	__sync_fetch_and_add(&g->slots[slot].busy[m], 1);
	if ((*(volatile __u32 *)&g->active & 1) != m) {
		__sync_fetch_and_add(&g->slots[slot].busy[m], -1);
		m ^= 1;
		__sync_fetch_and_add(&g->slots[slot].busy[m], 1);
		if ((*(volatile __u32 *)&g->active & 1) != m) {
			__sync_fetch_and_add(&g->slots[slot].busy[m], -1);
			count_drop(DROP_COUNTS_SWITCH);
			return -1;
		}
	}
	*gp = g;
	*slotp = slot;
	return m;
}

static __always_inline void counts_exit(struct counts_gate *g, __u32 slot, int m)
{
	__sync_fetch_and_add(&g->slots[slot & (COUNTS_SLOTS - 1)].busy[m & 1], -1);
}

// add_count counts one event in the active counts map.
static __always_inline void add_count(struct count_key *k)
{
	struct counts_gate *g = NULL;
	__u32 slot = 0;
	int m = counts_enter(&g, &slot);
	if (m < 0 || !g)
		return;
	add_count_to(m ? (void *)&counts1 : (void *)&counts0, k);
	counts_exit(g, slot, m);
}

#include "unwind.h"
#include "latency.h"

// begin_event handles the filter and the bookkeeping of one event and fills
// the count key (probe, tgid, comm, kernel stack).
static __always_inline int begin_event(void *ctx, __u64 cookie, int with_kstack,
				       struct count_key *k)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (!traced_pid(tgid, (__u32)id))
		return 0;
	count_hit((__u32)cookie);
	k->probe = (__u32)cookie;
	k->tgid = tgid;
	k->kstack = with_kstack ? store_kernel_stack(ctx) : 0;
	task_comm(k->comm);
	return 1;
}

// record_fp counts an event with a frame-pointer walk of the user stack.
static __always_inline int record_fp(struct count_key *k, __u64 ip, __u64 sp,
				     __u64 bp, int entry, __u32 slot)
{
	__u32 zero = 0;
	struct user_stack *st = bpf_map_lookup_elem(&scratch, &zero);

	if (!st)
		return 0;
	if (user_pc(ip)) {
		if (fp_walk(st, ip, sp, bp, entry))
			mark_gone(st);
		else
			mark_stale(st, sp);
	} else { // a kernel thread (sampling): no user stack
		st->len = 0;
		st->flags = 0;
		st->hash = 2;
	}
	k->ustack = store_user_stack(st);
	count_event(k, slot);
	return 0;
}

// unwind_begin starts a DWARF walk in the state slot of this context kind;
// NULL when the event was handled with frame pointers instead (FP mode, no
// tables for the process yet, a kernel thread).
static __always_inline struct unwind_state *unwind_begin(void *ctx, __u64 cookie,
		struct pt_regs *regs, int with_kstack, __u32 slot)
{
	__u64 ip = PT_REGS_IP(regs), sp = PT_REGS_SP(regs), bp = PT_REGS_FP(regs);
	struct count_key k = {};
	int entry = (cookie >> 32) & COOKIE_ENTRY;

	if (!begin_event(ctx, cookie, with_kstack, &k))
		return NULL;
	lat_prepare(ctx, cookie, slot);
	if (unwind_mode == UNWIND_FP || !user_pc(ip)) {
		record_fp(&k, ip, sp, bp, entry, slot);
		return NULL;
	}
	struct unwind_state *s = bpf_map_lookup_elem(&unwind_states, &slot);
	if (s) {
		s->key = k;
		pm_keep(s, k.tgid); // else proc_list chooses the walk's list
	}
	// Without bpf_find_vma, a walk needs a mapping list: the choice made
	// here is the one its frames use.
	if (!s || (!have_find_vma && !s->pm_n && !proc_list(s))) {
		count_drop(DROP_NO_TABLES);
		record_fp(&k, ip, sp, bp, entry, slot);
		return NULL;
	}
	s->ip = ip;
	s->sp = sp;
	s->bp = bp;
	save_gprs(s->gpr, regs);
	s->bx_at = 0;
	s->exact = 1;
	s->entry = entry;
	s->vm_ok = 0;
	s->chunk_at = 0;
	s->chunk_off = 0;
	s->partial = 0;
	s->busy = 0;
	s->unknown = 0;
	s->switches = 0;
	s->go_entry = 0;
	s->slot = slot;
	s->calls = 0;
	s->st.len = 0;
	s->st.flags = 0;
	s->st.hash = 0xcbf29ce484222325ULL;
	uretprobe_init(s);
	return s;
}

// unwind_finish stores the walked stack and counts the event.
static __always_inline int unwind_finish(struct unwind_state *s, __u32 slot)
{
	if ((s->st.flags & STACK_TRUNCATED) && mark_gone(&s->st))
		; // not partial: the task is in execve or exiting
	else if (mark_stale(&s->st, s->gpr[DW_RSP]))
		; // nor here: the registers were the old program's
	else if (s->partial && defer_stacks && defer_emit(s))
		return 0; // counted by user space once it has finished the walk
	else if (s->busy || s->unknown)
		count_drop(DROP_UNKNOWN_PC);
	else if (s->partial)
		count_drop(DROP_NO_TABLES);
	else if (s->st.flags & STACK_TRUNCATED)
		count_drop(DROP_CUT);
	if (!s->st.hash)
		s->st.hash = 1;
	s->key.ustack = store_user_stack(&s->st);
	count_event(&s->key, slot);
	return 0;
}

// record handles one event: user registers (ip, sp, bp), ctx for
// bpf_get_stack when with_kstack, the state slot of the context kind, and
// the prog array and index of its step program. Kernel-probe programs call
// it as record(ctx, cookie, &regs, 1, SLOT_KPROBE, steps_kprobe, STEP_KPROBE),
// regs the user registers.
#define record(ctx, cookie, regs, with_kstack, slot, steps, idx)                         \
	({                                                                                 \
		struct unwind_state *s_ = unwind_begin(ctx, cookie, regs, with_kstack, slot); \
		if (s_) {                                                                  \
			if (use_tail_calls)                                                \
				bpf_tail_call(ctx, &steps, idx);                           \
			unwind_inline(s_); /* no tail calls, or the call failed */         \
			unwind_finish(s_, slot);                                           \
		}                                                                          \
		0;                                                                         \
	})

// step_program runs STEP_FRAMES frames of the walk in slot and tail-calls
// itself until the walk ends or the tail-call budget is spent.
#define step_program(ctx, slot, steps, idx)                                               \
	({                                                                                 \
		__u32 slot_ = slot;                                                        \
		struct unwind_state *s_ = bpf_map_lookup_elem(&unwind_states, &slot_);    \
		if (s_) {                                                                  \
			int done_ = run_steps(s_, STEP_FRAMES);                            \
			if (!done_ && s_->calls < MAX_TAIL_CALLS - 1) {                    \
				s_->calls++;                                               \
				bpf_tail_call(ctx, &steps, idx);                           \
			}                                                                  \
			if (!done_)                                                        \
				s_->st.flags |= STACK_TRUNCATED;                           \
			unwind_finish(s_, slot_);                                          \
		}                                                                          \
		0;                                                                         \
	})

static __always_inline int on_uprobe(struct pt_regs *regs, __u32 slot)
{
	__u64 cookie = probe_cookie(regs);

	if (slot == SLOT_UPROBE_MULTI)
		return record(regs, cookie, regs, 0, SLOT_UPROBE_MULTI, steps_multi, 0);
	return record(regs, cookie, regs, 0, SLOT_UPROBE, steps_kprobe, STEP_UPROBE);
}

SEC("uprobe")
int probee_uprobe(struct pt_regs *regs)
{
	return on_uprobe(regs, SLOT_UPROBE);
}

SEC("uprobe.multi")
int probee_uprobe_multi(struct pt_regs *regs)
{
	return on_uprobe(regs, SLOT_UPROBE_MULTI);
}

SEC("uprobe")
int probee_step_uprobe(struct pt_regs *regs)
{
	return step_program(regs, SLOT_UPROBE, steps_kprobe, STEP_UPROBE);
}

SEC("kprobe")
int probee_step_kprobe(struct pt_regs *regs)
{
	return step_program(regs, SLOT_KPROBE, steps_kprobe, STEP_KPROBE);
}

SEC("uprobe.multi")
int probee_step_uprobe_multi(struct pt_regs *regs)
{
	return step_program(regs, SLOT_UPROBE_MULTI, steps_multi, 0);
}

// Tracepoints run in kernel context: the user registers come from the task.
// A tracepoint is shared: the kernel gives its hits to other perf events on
// it (perf record -e, perf stat) only when its BPF programs return 1, so
// these return 1 (as do their step programs, whose value a tail call
// returns), as bpftrace does since its PR #1857. probee's own perf event
// is disabled once attached (quietEvent), so it takes none of them.
SEC("tracepoint")
int probee_tracepoint(void *ctx)
{
	struct pt_regs *regs = scratch_regs(SLOT_TRACEPOINT);
	struct pt_regs *uregs = task_user_regs();
	__u64 cookie = probe_cookie(ctx);

	if (!regs || bpf_probe_read_kernel(regs, sizeof(*regs), uregs))
		return 1;
	record(ctx, cookie, regs, 1, SLOT_TRACEPOINT, steps_tp, 0);
	return 1;
}

SEC("tracepoint")
int probee_step_tracepoint(void *ctx)
{
	step_program(ctx, SLOT_TRACEPOINT, steps_tp, 0);
	return 1;
}

// Set by the loader for --sample (rodata).
const volatile __u32 sample_probe = 0; // the probe id samples are counted under
const volatile __u32 include_idle = 0; // 1: keep samples of the idle task

// CPU sampling: the interrupted registers are the user's when the sample hit
// user mode; otherwise the user registers come from the task.
SEC("perf_event")
int probee_perf(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pt_regs *regs = scratch_regs(SLOT_PERF);
	int user = (ctx->regs.cs & 3) == 3;

	if (!regs || (id == 0 && !include_idle))
		return 0; // (or the idle task, pid 0)
	if (user) {
		*regs = ctx->regs;
	} else {
		struct pt_regs *uregs = task_user_regs();
		if (bpf_probe_read_kernel(regs, sizeof(*regs), uregs))
			return 0;
	}
	return record(ctx, sample_probe, regs, !user, SLOT_PERF, steps_perf, 0);
}

SEC("perf_event")
int probee_step_perf(struct bpf_perf_event_data *ctx)
{
	return step_program(ctx, SLOT_PERF, steps_perf, 0);
}

// Children of traced processes are traced too (-p PID, -- CMD).
SEC("tp_btf/sched_process_fork")
int BPF_PROG(probee_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = PID_TRACED;

	if (!filter_pids || ptgid == ctgid) // no filter, or a new thread
		return 0;
	if (!bpf_map_lookup_elem(&pids, &ptgid))
		return 0;
	bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY);
	return 0;
}

// Process exit, as a BTF tracepoint: probee's own lifecycle hooks need no
// tracefs mounted. Kernels from 6.16 pass a third argument (group_dead);
// only the task is read, so one program serves both prototypes.
// An exec replaces the process's mappings: its old mapping array must not
// serve the new image (file_tables do, through bpf_find_vma, until user
// space writes the new array).
SEC("tp_btf/sched_process_exec")
int BPF_PROG(probee_exec, struct task_struct *task)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&proc_maps, &tgid);
	maps_changed(); // its walks may have used its parent's list
	return 0;
}

// The task of a process's group leader is freed once the process was
// reaped: an entry still PID_EXITED goes with it (one a traced parent's
// fork gave to a new process with the pid is 1 again, and stays), and so
// does its seen entry, so that a process that takes the pid is announced
// in turn (its events until then, in the grace period between the pid's
// release and this, find the old entry).
SEC("tp_btf/sched_process_free")
int BPF_PROG(probee_free, struct task_struct *task)
{
	__u32 tgid = KREAD(task, tgid);

	if (KREAD(task, pid) != tgid)
		return 0;
	bpf_map_delete_elem(&seen, &tgid);
	if (!filter_pids)
		return 0;
	__u8 *v = bpf_map_lookup_elem(&pids, &tgid);
	if (v && (*v & PID_EXITED))
		bpf_map_delete_elem(&pids, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(probee_exit, struct task_struct *task)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	// The last thread of a traced process marks its entry before its pid
	// can be freed: a process that takes the pid later is not traced
	// (live counts the threads that have not begun to exit). The entry
	// stays for the exit's own samples (PID_EXITED).
	struct signal_struct *sig = KREAD(task, signal);
	if (filter_pids && KREAD(sig, live.counter) == 0) {
		__u8 *v = bpf_map_lookup_elem(&pids, &tgid);
		if (v)
			*v |= PID_EXITED;
	}
	if ((__u32)id != tgid) // a thread exiting, not the process
		return 0;
	bpf_map_delete_elem(&proc_maps, &tgid); // free its unwind mappings
	maps_changed(); // its tgid may be reused
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

#include "stopgate.h"
#include "filekey.h"
#include "kprobe.h"

// Force the shared enums into BTF for bpf2go -type (struct probee_enums).
const struct probee_enums *unused_enums __attribute__((unused));
