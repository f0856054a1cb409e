package unwind

import (
	"fmt"
	"math"
)

// builder accumulates the entries of a table, or of one part of it, in
// their final form: pcs relative to base (the first FDE's start, which is
// always the first entry's pc) cut into a page, kept in the page index,
// and a low 16 bits, kept in the Entry. Nothing is copied at the end: the
// slices become the Table's. Entries are appended in pc order; only the
// last ones are ever removed (an entry replaced at the same pc, entries
// clipped by a later FDE), so the page index is kept up to date as they
// come and go.
type builder struct {
	base    uint64
	entries []Entry
	// pages[p] is the index of the first entry whose page is p or later,
	// for every page up to the last entry's (Table.Pages without its final
	// element).
	pages []uint32
	// far holds a tail of entries 4 GiB or more past base: no table can
	// address them, which is an error unless a later FDE clips them.
	far   []farEntry
	rules ruleIndex
	stats Stats
	err   error // the table cannot be built (too many rules)
}

type farEntry struct {
	pc   uint64
	rule uint16
}

// newBuilder returns a builder for entries from base on, appended to
// entries (an empty slice with room for them, or nil).
func newBuilder(base uint64, entries []Entry) *builder {
	return &builder{base: base, entries: entries, rules: newRuleIndex()}
}

// add appends (pc, rule), replacing an entry at the same pc and skipping a
// rule equal to the previous entry's.
func (b *builder) add(pc uint64, r Rule) error {
	i, err := b.rules.of(&r)
	if err != nil {
		return err
	}
	b.addIndex(pc, i)
	return nil
}

// addIndex is add with the rule's index.
func (b *builder) addIndex(pc uint64, rule uint16) {
	last, ok := b.last()
	if ok && last.pc == pc {
		b.pop()
		last, ok = b.last()
	}
	if !ok || last.rule != rule {
		b.push(pc, rule)
	}
}

// clip drops entries after pc (a later FDE starting inside an earlier one wins).
func (b *builder) clip(pc uint64) {
	for {
		last, ok := b.last()
		if !ok || last.pc <= pc {
			return
		}
		b.pop()
		b.stats.Overlaps++
	}
}

// last returns the last entry with its absolute pc.
func (b *builder) last() (farEntry, bool) {
	if n := len(b.far); n > 0 {
		return b.far[n-1], true
	}
	n := len(b.entries)
	if n == 0 {
		return farEntry{}, false
	}
	e := b.entries[n-1]
	return farEntry{pc: b.base + uint64(len(b.pages)-1)<<PageShift + uint64(e.PCLow), rule: e.Rule}, true
}

// push appends an entry past the last one.
func (b *builder) push(pc uint64, rule uint16) {
	rel := pc - b.base
	if rel > math.MaxUint32 { // and so are the later ones
		b.far = append(b.far, farEntry{pc, rule})
		return
	}
	for page := int(rel >> PageShift); len(b.pages) <= page; {
		b.pages = append(b.pages, uint32(len(b.entries)))
	}
	b.entries = append(b.entries, Entry{PCLow: uint16(rel), Rule: rule})
}

// pop removes the last entry, and the pages that started with it.
func (b *builder) pop() {
	if n := len(b.far); n > 0 {
		b.far = b.far[:n-1]
		return
	}
	b.entries = b.entries[:len(b.entries)-1]
	n := uint32(len(b.entries))
	for len(b.pages) > 0 && b.pages[len(b.pages)-1] >= n {
		b.pages = b.pages[:len(b.pages)-1]
	}
}

// finish returns the table. The page index ends with the entry count.
func (b *builder) finish() (*Table, error) {
	if b.err != nil {
		return nil, b.err
	}
	if n := len(b.far); n > 0 {
		return nil, fmt.Errorf("unwind info spans %#x bytes, more than the 4 GiB a table can address", b.far[n-1].pc-b.base)
	}
	t := &Table{Rules: b.rules.list, Stats: b.stats}
	if len(b.entries) == 0 {
		t.Pages = []uint32{0}
		return t, nil
	}
	if uint64(len(b.entries)) > math.MaxUint32 {
		return nil, fmt.Errorf("%d unwind entries: more than a table can index", len(b.entries))
	}
	t.Base, t.Entries = b.base, b.entries
	t.Pages = append(b.pages, uint32(len(b.entries)))
	return t, nil
}

// appendPart continues b with p, the part whose first FDE starts at start
// (and whose base is b's): what a single pass would have done at p's first
// FDE (clip b, replace or merge p's first entry) is done here; p's later
// entries, which differ from their predecessors in pc and rule, are pushed
// as they are. p's rules join b's in p's order of first use, as in a
// single pass.
func (b *builder) appendPart(p *builder, start uint64) error {
	remap := make([]uint16, len(p.rules.list))
	for i, r := range p.rules.list {
		j, err := b.rules.of(&r)
		if err != nil {
			return err
		}
		remap[i] = j
	}
	b.clip(start)
	b.stats.add(&p.stats)
	first := true
	p.each(func(pc uint64, rule uint16) {
		if first {
			b.addIndex(pc, remap[rule])
			first = false
			return
		}
		b.push(pc, remap[rule])
	})
	return nil
}

// each calls fn with every entry of b in order.
func (b *builder) each(fn func(pc uint64, rule uint16)) {
	page := 0
	for i, e := range b.entries {
		for page+1 < len(b.pages) && b.pages[page+1] <= uint32(i) {
			page++
		}
		fn(b.base+uint64(page)<<PageShift+uint64(e.PCLow), e.Rule)
	}
	for _, e := range b.far {
		fn(e.pc, e.rule)
	}
}
