package bpf

import "fmt"

// Table placement in the table storage (unwind_shards, unwind_maps.h; read by rules.h). The BPF
// search reads a page's entries, and the element before them (where the
// last entry of an earlier page is), through one shard lookup per frame,
// so placement keeps each of those runs, and each table's page index,
// within one shard. A page whose run would cross into the next shard
// starts at that shard's first element instead, with a lead pad there: an
// entry at pc_low 0 with the rule of the entry before (0 before the
// table's first entry: rule 0 is no rule), so the search never reads
// before it. The gap left behind goes to the previous page, as copies of
// the element before the gap: a search that finds one finds that
// element's rule, as it would without them. So every page's search finds
// what it found before.

// tableLayout is where one table goes: its page index at pagesOff, as
// pages (offsets into the padded entries), then n padded entries; lead[p]
// says page p starts with a lead pad.
type tableLayout struct {
	pagesOff uint64
	pages    []uint32
	lead     []bool
	n        uint64
}

// entriesOff is the storage element of the table's first padded entry.
func (l tableLayout) entriesOff() uint64 { return l.pagesOff + uint64(len(l.pages)) }

// end is the storage element after the table.
func (l tableLayout) end() uint64 { return l.entriesOff() + l.n }

func shardOf(elem uint64) uint64 { return elem >> shardShift }

// layoutTable places a table with page index pages (unwind.Table.Pages)
// at the first free storage element next or after it.
func layoutTable(next uint64, pages []uint32) (tableLayout, error) {
	np := uint64(len(pages))
	if np > shardU32s {
		return tableLayout{}, fmt.Errorf("a page index of %d elements: more than one storage shard holds (%d)", np, shardU32s)
	}
	l := tableLayout{pagesOff: next, pages: make([]uint32, np), lead: make([]bool, np)}
	if shardOf(next) != shardOf(next+np-1) {
		l.pagesOff = (shardOf(next) + 1) << shardShift
	}
	start, pos := l.entriesOff(), uint64(0)
	for p := range np - 1 {
		k := uint64(pages[p+1] - pages[p])
		first, last := start+pos, start+pos+max(k, 1)-1 // an empty page's search reads the element at its start
		if pos > 0 {
			first-- // the element before the page
		}
		if shardOf(first) != shardOf(last) {
			if k >= shardU32s {
				return tableLayout{}, fmt.Errorf("page %d has %d entries: more than one storage shard holds (%d)", p, k, shardU32s-1)
			}
			pos = shardOf(last)<<shardShift - start
			l.lead[p] = true
		}
		if pos+k+1 >= 1<<32 {
			return tableLayout{}, fmt.Errorf("more than 2^32 padded entries")
		}
		l.pages[p] = uint32(pos)
		if l.lead[p] {
			pos++
		}
		pos += k
	}
	l.pages[np-1] = uint32(pos)
	l.n = pos
	return l, nil
}

// padEntries lays entries (encoded, in the order of pages) out as l says.
func (l tableLayout) padEntries(pages, entries []uint32) []uint32 {
	out := make([]uint32, l.n)
	var prev uint32 // the last element written
	cur := uint32(0)
	for p := range len(pages) - 1 {
		if l.lead[p] {
			for ; cur < l.pages[p]; cur++ {
				out[cur] = prev
			}
			prev &^= 0xffff
			out[cur] = prev
			cur++
		}
		run := entries[pages[p]:pages[p+1]]
		cur += uint32(copy(out[cur:], run))
		if len(run) > 0 {
			prev = run[len(run)-1]
		}
	}
	return out
}
