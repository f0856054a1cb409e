// Which mapping holds a pc, from the process's sorted mapping list
// (proc_maps, written by user space): the list a walk uses (its process's,
// or its parent's for a child user space has not heard of yet), the two
// mappings the walk met last, kept in the walk state for the process's
// next event while no list changed (maps_gen), and the binary search.
// Without a list, vma.h finds the mapping through bpf_find_vma.
#ifndef PROBEE_MAPPINGS_H
#define PROBEE_MAPPINGS_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "kernel.h"
#include "compat.h"
#include "unwind_state.h"
#include "unwind_maps.h"

// le reports x <= y for values below 2^63 without a branch: the binary
// searches of the walk are branch-free, or the verifier's path count
// explodes.
static __always_inline __u64 le(__u64 x, __u64 y)
{
	return 1 - ((y - x) >> 63);
}

// find_mapping binary-searches the process's sorted mappings for pc.
static __always_inline struct unwind_mapping *find_mapping(struct proc_info *p, __u64 pc)
{
	__u32 n = p->n, base = 0;

	if (n == 0 || n > MAX_MAPPINGS)
		return NULL;
	// Last mapping whose start <= pc.
	for (int i = 0; i < 9 && n > 1; i++) { // log2(MAX_MAPPINGS)+1
		__u32 half = n / 2;
		struct unwind_mapping *m = &p->maps[(base + half) & (MAX_MAPPINGS - 1)];
		base += half * le(m->start, pc);
		n -= half;
	}
	struct unwind_mapping *m = &p->maps[base & (MAX_MAPPINGS - 1)];
	if (pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

// NO_LIST: no mapping list (parent_tgid, proc_list).
#define NO_LIST 0xffffffffU

// parent_tgid is the process that forked the current one, when neither
// has exec'd since (exec ids: the child's is its parent's at the fork,
// and each exec raises a task's own), so that the child runs its
// parent's image; NO_LIST otherwise. User space gives a child a mapping
// list of its own once it has heard of it, tens of ms later; until then
// its walks use its parent's, which spares them bpf_find_vma: in
// interrupt context (samples, page faults) that works once per event, so
// a walk through a second file was handed to user space with 28 KiB of
// stack copy (defer.h), too little for a big frame such as rustc's
// 540 KiB one.
static __always_inline __u32 parent_tgid(void)
{
	struct task_struct *t = current_task();
	struct task_struct *parent = KREAD(t, real_parent);
	__u64 id = KREAD(t, parent_exec_id);

	if (!parent || KREAD(t, self_exec_id) != id || KREAD(parent, self_exec_id) != id)
		return NO_LIST;
	return KREAD(parent, tgid);
}

// proc_list is the mapping list of the walk: the process's own, else its
// parent's (parent_tgid). The choice is made at the walk's first lookup
// and kept in the mapping cache's list_tgid (NO_LIST: neither has one)
// for its other frames.
static __always_inline struct proc_info *proc_list(struct unwind_state *s)
{
	__u32 tgid = s->mappings.list_tgid ? s->mappings.list_tgid : s->ev.key.tgid; // a stack copy: 6.1 refuses a PTR_TO_MEM map key
	struct proc_info *p = NULL;

	if (tgid != NO_LIST)
		p = bpf_map_lookup_elem(&proc_maps, &tgid);
	if (!p && !s->mappings.list_tgid) {
		tgid = parent_tgid();
		if (tgid != NO_LIST)
			p = bpf_map_lookup_elem(&proc_maps, &tgid);
		if (!p)
			tgid = NO_LIST;
	}
	s->mappings.list_tgid = tgid;
	return p;
}

// maps_gen_of reads element i of maps_gen (0 when missing).
static __always_inline __u64 maps_gen_of(__u32 i)
{
	__u64 *g = bpf_map_lookup_elem(&maps_gen, &i);
	return g ? *g : 0;
}

// maps_changed counts a change of the mapping lists user space did not
// write: a list deleted, or a process whose walks may have used its
// parent's list exec'd or exited.
static __always_inline void maps_changed(void)
{
	__u32 i = MAPS_GEN_BPF;
	__u64 *g = bpf_map_lookup_elem(&maps_gen, &i);
	if (g)
		__sync_fetch_and_add(g, 1);
}

// mappings_keep starts a walk of process tgid with the mapping cache of
// the slot's last walk (the mappings and the list choice) when that was
// the same process's and no list changed since (a hot probe's walks skip
// the list's hash lookup); with an empty one otherwise.
static __always_inline void mappings_keep(struct unwind_state *s, __u32 tgid)
{
	struct mapping_cache *c = &s->mappings;
	__u64 u = maps_gen_of(MAPS_GEN_USER), b = maps_gen_of(MAPS_GEN_BPF);

	if (c->tgid == tgid && c->gen[0] == u && c->gen[1] == b)
		return;
	c->n = 0;
	c->list_tgid = 0;
	c->tgid = tgid;
	c->gen[0] = u;
	c->gen[1] = b;
}

// known_mapping returns the mapping of the walk's pc from its list
// (proc_list): one of the two found last, or found now and remembered.
static __always_inline struct unwind_mapping *known_mapping(struct unwind_state *s)
{
	struct mapping_cache *c = &s->mappings;

	if (c->n > 0 && s->cur.ip >= c->recent[0].start && s->cur.ip < c->recent[0].end)
		return &c->recent[0];
	if (c->n > 1 && s->cur.ip >= c->recent[1].start && s->cur.ip < c->recent[1].end)
		return &c->recent[1];
	struct proc_info *p = proc_list(s);
	struct unwind_mapping *m = p ? find_mapping(p, s->cur.ip) : NULL;
	if (!m)
		return NULL;
	c->recent[1] = c->recent[0];
	c->recent[0] = *m;
	c->n = c->n < 2 ? c->n + 1 : 2;
	return &c->recent[0];
}

#endif
