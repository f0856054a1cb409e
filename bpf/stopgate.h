// The stop gates (the programs are in probee.bpf.c): probes that stop
// a traced process (SIGSTOP) and tell user space, which loads the unwind
// tables of its mappings and sends SIGCONT, so that no event is unwound
// without them.
//
//   - probee_ldso_gate, on ld.so's _dl_debug_state: ld.so calls it with
//     _r_debug.r_state = RT_ADD before it maps objects and RT_CONSISTENT
//     once they are mapped, before their constructors run (at start-up and
//     at every dlopen). The gate stops at the RT_CONSISTENT that follows an
//     RT_ADD of the same process; a dlclose (RT_DELETE) does not stop.
//   - probee_gate, on a static command's entry point (no ld.so).
//   - probee_root_gate, on every exec (tp_btf): a traced process that
//     execs under another root than probee's (a chroot, a container's
//     pivot_root) stops there, with its program and ld.so mapped: both
//     are the files of its root, which no ld.so gate holds yet. User space
//     loads their tables and puts the ld.so gate on its ld.so.
//
// The cookie of the ld.so gate holds the virtual addresses of
// _dl_debug_state (high 32 bits) and _r_debug (low 32 bits) in ld.so; the
// load address is the probed pc minus the first, rounded down to a page
// (the pc may be reported one byte past the breakpoint).

#ifndef PROBEE_STOPGATE_H
#define PROBEE_STOPGATE_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "maps.h"
#include "counters.h"
#include "procs.h"

#define RT_CONSISTENT 0
#define RT_ADD 1
#define R_STATE_OFFSET 24 // struct r_debug: int r_version, r_map, r_brk, then r_state

// stop_process stops the current process and asks user space for its
// tables. The stop is recorded in holds before the SIGSTOP is queued, and
// the SIGSTOP is queued before the notice is submitted: user space's
// SIGCONT must come after it (a SIGCONT that came first would leave the
// process stopped for good; one that comes while the SIGSTOP is still
// pending cancels it, which is fine: the tables are loaded). No notice
// space or no hold entry, no stop.
static __always_inline int stop_process(__u64 id)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct task_struct *leader = KREAD(current_task(), group_leader);
	__u64 start = KREAD(leader, start_boottime);

	if (!e) {
		count_drop(DROP_EVENT_LOST);
		return 0;
	}
	struct hold_key k = {.tgid = id >> 32, .tid = (__u32)id, .when = bpf_ktime_get_ns()};
	if (bpf_map_update_elem(&holds, &k, &start, BPF_NOEXIST)) {
		bpf_ringbuf_discard(e, 0);
		count_drop(DROP_EVENT_LOST);
		return 0;
	}
	e->type = EVENT_GATE;
	e->tgid = k.tgid;
	e->pid = k.tid;
	e->when = k.when;
	bpf_send_signal(19 /* SIGSTOP */);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

// gate_stop stops the current process when it is traced (probee_gate).
static __always_inline int gate_stop(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (!filter_pids || !pid_traced(tgid))
		return 0;
	return stop_process(id);
}

// ldso_gate_stop stops the current process, when it is traced, at the
// RT_CONSISTENT that follows its RT_ADD (probee_ldso_gate, on
// _dl_debug_state; regs are the probe's).
static __always_inline int ldso_gate_stop(struct pt_regs *regs)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u64 cookie = probe_cookie(regs);
	__u64 base = (PT_REGS_IP(regs) - (cookie >> 32)) & ~0xfffULL;
	int state = -1;
	__u8 one = 1;

	if (!filter_pids || !pid_traced(tgid))
		return 0;
	bpf_probe_read_user(&state, sizeof(state), (void *)(base + (__u32)cookie + R_STATE_OFFSET));
	if (state == RT_ADD) {
		bpf_map_update_elem(&ldso_adding, &tgid, &one, BPF_ANY);
		return 0;
	}
	if (state != RT_CONSISTENT || bpf_map_delete_elem(&ldso_adding, &tgid) != 0)
		return 0;
	return stop_process(id);
}

// root_gate_stop stops the current process, when it is traced and task,
// which execs, has another root than probee's (probee_root_gate).
static __always_inline int root_gate_stop(struct task_struct *task)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct file_key *host = bpf_map_lookup_elem(&host_root, &zero);

	if (!host || !filter_pids || !pid_traced(tgid))
		return 0;
	struct inode *root = BPF_CORE_READ((struct task_struct___root *)task, fs, root.dentry, d_inode);
	if (BPF_CORE_READ(root, i_ino) == host->ino && BPF_CORE_READ(root, i_sb, s_dev) == host->dev)
		return 0;
	return stop_process(id);
}

#endif
