//go:build ignore

// probee's programs: every entry point of the object, by context. The
// headers hold the code they share (one concern each, none defines a
// program): record.h an event's way from its filter to its count, with
// the walks of fpstack.h and unwind.h; stackstore.h the stored stacks;
// counters.h and counts.h the counting; latency.h and measure.h the
// measure modes; procs.h the process filter; stopgate.h the gates. Their
// maps are in maps.h, unwind_maps.h and latency_maps.h, the types shared
// with Go in probee.h. bpf/doc.go tells the whole story.
//
// Every probe attach carries a cookie: bits 0-31 the probe id, bits 32+
// the enum cookie_bit flags (COOKIE_ENTRY: the probe sits on a function's
// first instruction, where the caller's return address is at [rsp] and
// rbp still belongs to the caller).
//
// Each capture program walks the user stack (frame pointers, or DWARF in a
// per-CPU state slot of its context kind, continued by its step program
// through tail calls), takes the kernel stack with bpf_get_stack where the
// context has one, and counts the event keyed by (probe, tgid, comm, user
// stack, kernel stack). Every loss is counted per CPU in drops, by cause.

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "maps.h"
#include "unwind_maps.h"
#include "latency_maps.h"
#include "record.h"
#include "latency.h"
#include "counters.h"
#include "procs.h"
#include "mappings.h"
#include "stopgate.h"
#include "vma.h"
#include "offcpu.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// ---- uprobe, uprobe_multi: function probes, USDT sites, the ld.so gate.

SEC("uprobe")
int probee_uprobe(struct pt_regs *regs)
{
	__u64 cookie = probe_cookie(regs);

	return record(regs, cookie, regs, 0, SLOT_UPROBE, steps_kprobe, STEP_UPROBE);
}

SEC("uprobe.multi")
int probee_uprobe_multi(struct pt_regs *regs)
{
	__u64 cookie = probe_cookie(regs);

	return record(regs, cookie, regs, 0, SLOT_UPROBE_MULTI, steps_multi, 0);
}

SEC("uprobe")
int probee_step_uprobe(struct pt_regs *regs)
{
	return step_program(regs, SLOT_UPROBE, steps_kprobe, STEP_UPROBE);
}

SEC("uprobe.multi")
int probee_step_uprobe_multi(struct pt_regs *regs)
{
	return step_program(regs, SLOT_UPROBE_MULTI, steps_multi, 0);
}

// Uretprobes, and uprobes on a function's RET instructions (--latency).
SEC("uprobe")
int probee_ret_uprobe(struct pt_regs *ctx)
{
	return lat_return(ctx, 0);
}

SEC("uprobe.multi")
int probee_ret_uprobe_multi(struct pt_regs *ctx)
{
	return lat_return(ctx, 0);
}

// On a static command's entry point (no ld.so).
SEC("uprobe")
int probee_gate(struct pt_regs *regs)
{
	return gate_stop();
}

// On ld.so's _dl_debug_state.
SEC("uprobe")
int probee_ldso_gate(struct pt_regs *regs)
{
	return ldso_gate_stop(regs);
}

// ---- kprobe, kprobe_multi: kernel function probes. They run in kernel
// context: the kernel stack comes from bpf_get_stack on ctx, the user
// stack from the task's saved user registers, walked like a tracepoint's.
// The cookie is the probe id only: the user registers are at a syscall or
// interrupt, never at a function's first instruction. kprobe_multi shares
// the SLOT_KPROBE state with plain kprobes: both run under the per-CPU
// bpf_prog_active guard, so one cannot interrupt the other on a CPU.

// Also used for kretprobes (link.Kretprobe with the same program).
SEC("kprobe")
int probee_kprobe(struct pt_regs *ctx)
{
	struct pt_regs *regs = scratch_regs(SLOT_KPROBE);
	__u64 cookie = probe_cookie(ctx) & 0xffffffffULL;

	if (!regs || user_regs(regs))
		return 0;
	return record(ctx, cookie, regs, 1, SLOT_KPROBE, steps_kprobe, STEP_KPROBE);
}

SEC("kprobe.multi")
int probee_kprobe_multi(struct pt_regs *ctx)
{
	struct pt_regs *regs = scratch_regs(SLOT_KPROBE);
	__u64 cookie = probe_cookie(ctx) & 0xffffffffULL;

	if (!regs || user_regs(regs))
		return 0;
	return record(ctx, cookie, regs, 1, SLOT_KPROBE, steps_kmulti, 0);
}

SEC("kprobe")
int probee_step_kprobe(struct pt_regs *regs)
{
	return step_program(regs, SLOT_KPROBE, steps_kprobe, STEP_KPROBE);
}

SEC("kprobe.multi")
int probee_step_kprobe_multi(struct pt_regs *ctx)
{
	return step_program(ctx, SLOT_KPROBE, steps_kmulti, 0);
}

// Kretprobes (--latency).
SEC("kprobe")
int probee_ret_kprobe(struct pt_regs *ctx)
{
	return lat_return(ctx, 1);
}

SEC("kprobe.multi")
int probee_ret_kprobe_multi(struct pt_regs *ctx)
{
	return lat_return(ctx, 1);
}

// ---- tracepoint: the user's --tracepoint specs. They run in kernel
// context: the user registers come from the task. A tracepoint is shared:
// the kernel gives its hits to other perf events on it (perf record -e,
// perf stat) only when its BPF programs return 1, so these return 1 (as do
// their step programs, whose value a tail call returns), as bpftrace does
// since its PR #1857. probee's own perf event is disabled once attached
// (quietEvent), so it takes none of them.

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

// ---- perf_event: CPU sampling (--sample). The interrupted registers are
// the user's when the sample hit user mode; otherwise the user registers
// come from the task.

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

// ---- tp_btf/sched_switch: off-CPU time (--off-cpu, offcpu.h). prev is
// current here: its user registers come from the task, its kernel stack
// from bpf_get_stack. The step program is on the same tracepoint (a tail
// call must stay on its hook).

SEC("tp_btf/sched_switch")
int BPF_PROG(probee_offcpu, int preempt, struct task_struct *prev, struct task_struct *next)
{
	offcpu_resume(next->pid, bpf_ktime_get_ns());
	__u32 state = offcpu_state_of(preempt, task_state(prev));
	struct pt_regs *regs = scratch_regs(SLOT_OFFCPU);

	if (!prev->pid || state >= OFFCPU_STATES || !pid_allowed(prev->tgid) || !regs || user_regs(regs))
		return 0; // the idle task, an exit, or not traced
	return record(ctx, offcpu_probe + state, regs, 1, SLOT_OFFCPU, steps_offcpu, 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(probee_step_offcpu)
{
	return step_program(ctx, SLOT_OFFCPU, steps_offcpu, 0);
}

// ---- tp_btf/sched_waking: who woke a wait (--wakers, offcpu.h). The
// waker is current: try_to_wake_up runs in its context (sched_wakeup may
// not: a wake-up queued to the wakee's CPU ends there). An interrupt can
// wake a thread while this program walks another waker on the CPU (before
// 6.2 the kernel runs the program again within itself): that one gets its
// kernel stack alone, and the walk in progress its slot. WAKER_PROBE
// counts no hit.

#define WAKER_PROBE 0xffffffff

SEC("tp_btf/sched_waking")
int BPF_PROG(probee_waker, struct task_struct *p)
{
	__u32 tid = p->pid, zero = 0;
	struct waker_walk *w = bpf_map_lookup_elem(&offcpu_wakee, &zero);
	struct pt_regs *regs = scratch_regs(SLOT_WAKER);

	if (!w || !regs || !offcpu_waiting(&tid))
		return 0; // not a traced thread's wait
	__u64 now = bpf_ktime_get_ns(), since = w->since;
	__u32 outer = w->tid;
	if (since && now - since < WAKER_WALK_STALE) {
		w->tid = tid;
		offcpu_wake_kernel(ctx, w, since); // within another's walk
		w->tid = outer;
		return 0;
	}
	w->tid = tid;
	if (!pid_allowed(bpf_get_current_pid_tgid() >> 32) || user_regs(regs)) {
		offcpu_wake_kernel(ctx, w, 0);
		return 0;
	}
	w->since = now;
	return record(ctx, WAKER_PROBE, regs, 1, SLOT_WAKER, steps_waker, 0);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(probee_step_waker)
{
	return step_program(ctx, SLOT_WAKER, steps_waker, 0);
}

// ---- tp_btf: the process lifecycle, as BTF tracepoints, which need no
// tracefs mounted.

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

// A traced process that execs under another root than probee's (a chroot,
// a container's pivot_root) stops there (stopgate.h).
SEC("tp_btf/sched_process_exec")
int BPF_PROG(probee_root_gate, struct task_struct *task)
{
	return root_gate_stop(task);
}

// Process exit. Kernels from 6.16 pass a third argument (group_dead); only
// the task is read, so one program serves both prototypes.
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
	__u32 tid = (__u32)id;
	bpf_map_delete_elem(&offcpu_starts, &tid); // its entry for waits (offcpu.h)
	if (tid != tgid) // a thread exiting, not the process
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

// A thread's exit ends its calls in flight (attached with --latency).
SEC("tp_btf/sched_process_exit")
int BPF_PROG(probee_lat_exit, struct task_struct *task)
{
	lat_thread_exit(task);
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

// ---- raw_tp: run by user space (BPF_PROG_TEST_RUN), never attached.

// probee_file_key tells user space the identity under which the unwinder
// finds a file's table (issue 21; fileKeyOf in filetables.go). vma_cb keys
// file_tables by the mapped file's inode (vm_file->f_inode): for a file of
// an overlayfs (a container's image), that is the layer's file, while
// /proc/PID/maps and the kernel's mapping records show the overlay's inode
// (file_user_inode, kernels 6.9+). So user space maps the file itself and
// runs this program on that address, in its own context: the key it reads
// back is the unwinder's, whatever the file system. args[0] is an address
// in the caller's file mapping; the mapped file's key goes to
// file_key_out. Returns 0, or 1 when no file mapping holds the address (or
// the lookup failed: -EBUSY under mmap lock contention, retried by user
// space).
SEC("raw_tp")
int probee_file_key(struct bpf_raw_tracepoint_args *ctx)
{
	struct vma_found v = {};
	__u32 zero = 0;

	if (!have_find_vma)
		return 1;
	if (find_vma(ctx->args[0], &v) || v.kind != VMA_FILE)
		return 1;
	bpf_map_update_elem(&file_key_out, &zero, &v.key, BPF_ANY);
	return 0;
}

// Force the types user space reads into BTF for bpf2go -type: the shared
// enums (struct probee_enums) and the structures no map or program names.
const struct probee_enums *unused_enums __attribute__((unused));
const struct event *unused_event __attribute__((unused));
const struct hold_key *unused_hold_key __attribute__((unused));
const struct lat_stack *unused_lat_stack __attribute__((unused));
const struct probe_measure *unused_probe_measure __attribute__((unused));
