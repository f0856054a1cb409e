// The counters every program may bump: losses by cause (drops), events by
// probe (hits), keys added to the kernel maps (in the counts gate's
// slots), and the counts gate itself, which tells an event which of the
// double-buffered counts and measures maps to use (--interval).
#ifndef PROBEE_COUNTERS_H
#define PROBEE_COUNTERS_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
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

// note_added counts a key added to a map of kind (enum added_kind) in this
// CPU's gate slot.
static __always_inline void note_added(__u32 kind)
{
	__u32 zero = 0;
	struct counts_gate *g = bpf_map_lookup_elem(&counts_gate, &zero);

	if (g)
		__sync_fetch_and_add(&g->slots[bpf_get_smp_processor_id() & (COUNTS_SLOTS - 1)].added[kind < ADDED_KINDS ? kind : 0], 1);
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

#endif
