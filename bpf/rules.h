// A table pc's rule (see unwind.h): in the rules the walk state keeps of
// its last walk, in the per-CPU cache of recent lookups (rule_cache,
// unwind_maps.h), else in the binary's table (page index, then a
// branch-free binary search).
#ifndef PROBEE_RULES_H
#define PROBEE_RULES_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "probee.h"
#include "unwind_state.h"
#include "unwind_maps.h"
#include "mappings.h"

// storage_shard returns the shard of the table storage that holds
// element idx; NULL: none was created.
static __always_inline void *storage_shard(__u32 idx)
{
	__u32 i = idx >> SHARD_SHIFT;
	return bpf_map_lookup_elem(&unwind_shards, &i);
}

// shard_u32 reads element idx of the table storage from sh, its shard.
static __always_inline __u32 shard_u32(void *sh, __u32 idx, int *ok)
{
	__u32 chunk = (idx & (SHARD_U32S - 1)) >> CHUNK_SHIFT;
	__u32 *c = bpf_map_lookup_elem(sh, &chunk);
	if (!c) {
		*ok = 0;
		return 0;
	}
	return c[idx & (CHUNK_U32S - 1)];
}

// rule_check is the check a rule_cache slot keeps of its key.
static __always_inline __u64 rule_check(__u64 key)
{
	return (key * 0x9E3779B97F4A7C15ULL) >> 32;
}

static __always_inline __u64 page_of(__u64 tpc)
{
	return tpc >> 16;
}

// search_rule is the index of the rule of table pc tpc in m's table,
// by binary search; -1: none, or the table storage is missing. The loader
// places a table's page index in one shard, and each page's entries with
// the element before them in one shard (padding where needed), so a frame
// takes two shard lookups.
static __always_inline long search_rule(struct unwind_mapping *m, __u64 tpc)
{
	__u64 page = page_of(tpc);
	__u32 low = tpc & 0xffff;
	int ok = 1;

	if (page >= m->npages)
		return -1;
	__u32 pi = m->pages_off + (__u32)page;
	void *sh = storage_shard(pi);
	if (!sh)
		return -1;
	__u32 lo = shard_u32(sh, pi, &ok);
	__u32 hi = shard_u32(sh, pi + 1, &ok);
	if (!ok || !(sh = storage_shard(m->entries_off + lo)))
		return -1;
	// Last entry in [lo, hi) with pc_low <= low (branch-free lower bound).
	__u32 base = lo, n = hi - lo;
	for (int i = 0; i < 17 && n > 1; i++) {
		__u32 half = n / 2;
		__u32 e = shard_u32(sh, m->entries_off + base + half, &ok);
		base += half * le(e & 0xffff, low);
		n -= half;
	}
	__u32 e = shard_u32(sh, m->entries_off + base, &ok);
	if (hi <= lo || (e & 0xffff) > low) {
		// None in this page: the last entry of an earlier page applies.
		if (base == 0)
			return -1;
		e = shard_u32(sh, m->entries_off + base - 1, &ok);
	}
	if (!ok)
		return -1;
	return e >> 16;
}

// rule_slot is the rule_cache slot of table pc tpc of m's table, and its
// key there; NULL: tpc does not fit a slot.
static __always_inline struct rule_cache_slot *rule_slot(struct unwind_mapping *m, __u64 tpc, __u64 *key)
{
	if (tpc >> 32)
		return NULL;
	*key = (__u64)(m->entries_off + 1) << 32 | tpc;
	__u32 i = rule_check(*key) & ((1 << RULE_CACHE_BITS) - 1);
	return bpf_map_lookup_elem(&rule_cache, &i);
}

// table_tag is the placement tag of m's table (enum mapping_flag). The
// caches of table lookups (rule_cache, the walk state's rules) key a pc
// by where its table lies, and user space places a table where released
// ones lay (bpf/tables.go): their checks include the tag, so that a rule
// cached for a table that lay there before is a miss.
static __always_inline __u32 table_tag(struct unwind_mapping *m)
{
	return m->flags >> MAPPING_TAG_SHIFT;
}

// cached_rule is the rule index rule_cache holds for table pc tpc of m's
// table; -1: none.
static __always_inline long cached_rule(struct unwind_mapping *m, __u64 tpc)
{
	__u64 key = 0;
	struct rule_cache_slot *c = rule_slot(m, tpc, &key);

	if (!c || c->key != key || c->val >> 32 != (rule_check(key) ^ table_tag(m)))
		return -1;
	return c->val & 0xffff;
}

// cache_rule keeps rule for table pc tpc of m's table in rule_cache.
static __always_inline void cache_rule(struct unwind_mapping *m, __u64 tpc, long rule)
{
	__u64 key = 0;
	struct rule_cache_slot *c = rule_slot(m, tpc, &key);

	if (c) {
		c->key = key;
		c->val = (__u64)rule | (rule_check(key) ^ table_tag(m)) << 32;
	}
}

// frame_check is the check of slot (key, r) of the walk state's rules.
static __always_inline __u32 frame_check(__u64 key, struct unwind_rule *r)
{
	__u32 *w = (__u32 *)r;

	return rule_check(key ^ ((__u64)w[0] << 32 | w[1]) ^ w[2]);
}

// frame_slot is the slot of the walk state's rules for table pc tpc of
// m's table, and its key there; NULL: tpc does not fit a key, or the
// legacy build (5.10's verifier: each frame step is checked per call).
// The slot is the frame's depth: where a stack repeats, each frame finds
// the rule the same frame of the last walk left, with no collisions.
static __always_inline struct frame_rule *frame_slot(struct unwind_state *s, struct unwind_mapping *m,
						     __u64 tpc, __u64 *key)
{
#ifdef PROBEE_LEGACY
	return NULL;
#else
	if (tpc >> 32)
		return NULL;
	*key = (__u64)(m->entries_off + 1) << 32 | tpc;
	return &s->last_rules[(s->st.len - 1) & (FRAME_RULES - 1)];
#endif
}

// find_rule looks up table pc tpc in m's table: in the walk state's rules
// (frame_slot), then through rule_cache; NULL: no rule. Nothing of the
// cache lookups stays live across the search (the slot is found again
// after it): the BPF stack of all calls together is 512 bytes, and spills
// count.
static __always_inline struct unwind_rule *find_rule(struct unwind_state *s, struct unwind_mapping *m, __u64 tpc)
{
	__u64 key = 0;

	if (page_of(tpc) >= m->npages)
		return NULL;
	struct frame_rule *f = frame_slot(s, m, tpc, &key);
	if (f && f->key == key && f->check == (frame_check(key, &f->r) ^ table_tag(m)))
		return &f->r;
	long rule = cached_rule(m, tpc);
	if (rule < 0) {
		rule = search_rule(m, tpc);
		if (rule < 0)
			return NULL;
		cache_rule(m, tpc, rule);
	}
	__u32 ri = rule;
	struct unwind_rule *r = bpf_map_lookup_elem(&unwind_rules, &ri);
	if (!r || r->cfa_type == CFA_NONE)
		return NULL;
	f = frame_slot(s, m, tpc, &key);
	if (!f)
		return r;
	f->r = *r;
	f->check = frame_check(key, &f->r) ^ table_tag(m);
	f->key = key;
	return &f->r;
}

#endif
