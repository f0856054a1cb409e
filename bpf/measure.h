// Adding up measures (see latency.h): a probe's log2 histogram, its
// total and maximum, and a stack's calls, total and maximum in the
// measures map of the current counts generation.
#ifndef PROBEE_MEASURE_H
#define PROBEE_MEASURE_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "maps.h"
#include "counters.h"
#include "latency_maps.h"

// measured_slot reports whether events of a context kind are measured:
// function probes are, tracepoints and samples are always counted.
static __always_inline int measured_slot(__u32 slot)
{
	return measure_mode != MEASURE_COUNT &&
	       (slot == SLOT_UPROBE || slot == SLOT_UPROBE_MULTI || slot == SLOT_KPROBE);
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (__u32)(v >> 1);
}

static __always_inline void atomic_max(__u64 *p, __u64 v)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)p;
		if (v <= old)
			return;
#ifdef PROBEE_LEGACY
		*p = v; // no BPF_CMPXCHG before 5.12: a racing larger value may be lost
		return;
#else
		if (__sync_val_compare_and_swap(p, old, v) == old)
			return;
#endif
	}
}

// lat_stat counts one pairing event of probe (a global function: the
// loops of lat_push and lat_pop call it without splitting the verifier's
// paths at its map lookup; inlined, 6.1's verifier gave up on lat_pop
// after a million instructions).
__attribute__((noinline)) int lat_stat(__u32 probe, __u32 stat)
{
	struct probe_measure *pm = bpf_map_lookup_elem(&probe_measures, &probe);
	if (!pm || stat >= LAT_STAT_MAX)
		return 0;
	// The compiler checks a copy of stat and indexes with another; the
	// mask after the barrier bounds the index the verifier sees (7 is
	// still inside the value: hist follows stats).
	asm volatile("" : "+r"(stat));
	__sync_fetch_and_add(&pm->stats[stat & 7], 1);
	return 0;
}

// probe_add adds one call of value v to its probe's histogram and sums.
static __always_inline void probe_add(__u32 probe, __u64 v)
{
	struct probe_measure *pm = bpf_map_lookup_elem(&probe_measures, &probe);
	if (!pm)
		return;
	__sync_fetch_and_add(&pm->calls, 1);
	__sync_fetch_and_add(&pm->total, v);
	__u32 b = log2_bucket(v);
	// Masked where the verifier sees it: 6.1 lost the bound of the
	// compiler's own mask ("unbounded memory access").
	asm volatile("" : "+r"(b));
	b &= HIST_BUCKETS - 1;
	__sync_fetch_and_add(&pm->hist[b], 1);
	__sync_fetch_and_add(&pm->hsum[b], v);
	atomic_max(&pm->max, v);
}

static __always_inline void add_measure_to(void *m, struct count_key *k, __u64 v)
{
	struct measure *x = bpf_map_lookup_elem(m, k);
	if (!x) {
		struct measure zero = {};
		long err = bpf_map_update_elem(m, k, &zero, BPF_NOEXIST);
		if (err && err != -17 /* EEXIST: another CPU added it */) {
			count_drop(DROP_COUNTS_FULL);
			return;
		}
		if (!err)
			note_added(ADDED_COUNTS);
		x = bpf_map_lookup_elem(m, k);
		if (!x) {
			count_drop(DROP_COUNTS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&x->calls, 1);
	__sync_fetch_and_add(&x->total, v);
	atomic_max(&x->max, v);
}

// add_measure adds one call of value v to stack k's measure, in the
// active measures map (the counts gate of counters.h).
static __always_inline void add_measure(struct count_key *k, __u64 v)
{
	struct counts_gate *g = NULL;
	__u32 slot = 0;
	int m = counts_enter(&g, &slot);
	if (m < 0 || !g)
		return;
	add_measure_to(m ? (void *)&measures1 : (void *)&measures0, k, v);
	counts_exit(g, slot, m);
}

#endif
