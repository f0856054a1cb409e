// Which processes are traced (the pids filter, --pid and -- CMD, with
// the children of traced processes) and the notice user space gets of each
// traced process's first event (which makes it snapshot its mappings).
// The lifecycle programs that keep the filter are in probee.bpf.c.
#ifndef PROBEE_PROCS_H
#define PROBEE_PROCS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "maps.h"
#include "counters.h"

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
		return !self_tgid || tgid != self_tgid;
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
// 0 when it is not traced (without a pid filter: self_tgid alone). With a
// pid filter, the tgid's pids entry remembers that it was announced
// (PID_ANNOUNCED), which spares the events after the first their lookup
// of seen (an LRU map, the dearer kind; seen stays the record, read at
// exit).
static __always_inline int traced_pid(__u32 tgid, __u32 pid)
{
	__u8 *v = NULL;

	if (filter_pids) {
		v = bpf_map_lookup_elem(&pids, &tgid);
		if (!pid_entry_ok(v))
			return 0;
		if (*v & PID_ANNOUNCED)
			return 1;
	} else if (self_tgid && tgid == self_tgid) {
		return 0;
	}
	if (announce(tgid, pid) && v)
		*v |= PID_ANNOUNCED;
	return 1;
}

#endif
