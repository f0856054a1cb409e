// Where an event goes once its stacks are stored: counted in the active
// counts map (counts0/1, the counts gate of counters.h), or for a function
// probe in a measure mode (latency.h) added to its stack's measure or
// pushed as a call in flight.
#ifndef PROBEE_COUNTS_H
#define PROBEE_COUNTS_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "maps.h"
#include "counters.h"
#include "latency_maps.h"
#include "measure.h"
#include "latency.h"
#include "offcpu.h"

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

// count_event counts an event whose stacks are stored: in the counts
// map, or for a function probe in a measure mode as its measure; a
// switch-out (--off-cpu) is parked until the thread runs again, and a
// waker's stacks (--wakers) are joined to the wait it ends.
static __always_inline void count_event(struct count_key *k, __u32 slot)
{
	if (slot == SLOT_OFFCPU) {
		offcpu_park(k);
		return;
	}
	if (slot == SLOT_WAKER) {
		offcpu_wake(k);
		return;
	}
	if (!measured_slot(slot)) {
		add_count(k);
		return;
	}
	struct lat_pending *p = bpf_map_lookup_elem(&lat_pendings, &slot);
	if (!p)
		return;
	if (measure_mode == MEASURE_WEIGHT) {
		probe_add(k->probe, p->weight);
		add_measure(k, p->weight);
		return;
	}
	lat_push(k, p);
}

#endif
