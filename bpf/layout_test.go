package bpf

import (
	"strings"
	"testing"

	"github.com/probee/probee/unwind"
)

// storage is table storage elements by index, as the kernel's shards hold
// them (elements never written read 0).
type storage func(uint64) uint32

// search is find_rule of rules.h over st: the rule index of table pc tpc
// in the table at loc, false for none. Like the BPF search it reads the
// page index through the shard of its element and a page's entries through
// the shard of the page's first entry; it fails t when an element it reads
// lies in another shard.
func search(t *testing.T, st storage, loc tableLoc, tpc uint64) (uint16, bool) {
	t.Helper()
	page, low := tpc>>16, uint32(tpc&0xffff)
	if page >= uint64(loc.npages) {
		return 0, false
	}
	pi := uint64(loc.pagesOff) + page
	if shardOf(pi) != shardOf(pi+1) {
		t.Fatalf("page index elements %d and %d in two shards", pi, pi+1)
	}
	lo, hi := st(pi), st(pi+1)
	sh := shardOf(uint64(loc.entriesOff) + uint64(lo))
	read := func(rel uint32) uint32 {
		g := uint64(loc.entriesOff) + uint64(rel)
		if shardOf(g) != sh {
			t.Fatalf("page %d: entry element %d is not in shard %d of the page's first entry", page, g, sh)
		}
		return st(g)
	}
	base, n := lo, hi-lo
	for i := 0; i < 17 && n > 1; i++ {
		half := n / 2
		if read(base+half)&0xffff <= low {
			base += half
		}
		n -= half
	}
	e := read(base)
	if hi <= lo || e&0xffff > low {
		if base == 0 {
			return 0, false
		}
		e = read(base - 1)
	}
	return uint16(e >> 16), true
}

// checkSearch fails t unless search finds what t.Lookup does at every
// entry's pc, the byte before it, and the byte after the table.
func checkSearch(t *testing.T, st storage, loc tableLoc, tbl *unwind.Table, rules []unwind.Rule) {
	t.Helper()
	check := func(pc uint64) {
		want, wok := tbl.Lookup(pc)
		i, ok := search(t, st, loc, pc-tbl.Base)
		if ok = ok && rules[i].CFA != unwind.CFANone; ok != wok || ok && rules[i] != want {
			t.Fatalf("pc %#x: search found %+v (%v), Lookup %+v (%v)", pc, rules[i], ok, want, wok)
		}
	}
	for i := range tbl.Entries {
		pc := tbl.EntryPC(i)
		check(pc)
		check(pc - 1)
	}
	check(tbl.Base + uint64(len(tbl.Pages))<<16)
}

// laidOut lays tbl out from next in an in-memory storage.
func laidOut(t *testing.T, next uint64, tbl *unwind.Table) (storage, tableLoc, []unwind.Rule) {
	t.Helper()
	set := unwind.NewRuleSet(maxRules)
	entries, err := set.Entries(tbl)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layoutTable(next, tbl.Pages)
	if err != nil {
		t.Fatal(err)
	}
	mem := map[uint64]uint32{}
	for i, v := range l.pages {
		mem[l.pagesOff+uint64(i)] = v
	}
	for i, v := range l.padEntries(tbl.Pages, entries) {
		mem[l.entriesOff()+uint64(i)] = v
	}
	if l.pagesOff < next || l.end()-next > uint64(len(tbl.Pages)+len(tbl.Entries))+uint64(len(tbl.Pages))*2+shardU32s {
		t.Fatalf("layout from %d: %d..%d, more padding than a page index and two elements a page", next, l.pagesOff, l.end())
	}
	loc := tableLoc{pagesOff: uint32(l.pagesOff), npages: uint32(len(tbl.Pages) - 1), entriesOff: uint32(l.entriesOff())}
	return func(i uint64) uint32 { return mem[i] }, loc, set.Rules
}

// Every page's search stays in one shard, wherever the table starts, and
// finds what the table's own lookup finds.
func TestLayoutSearch(t *testing.T) {
	tables := map[string]*unwind.Table{
		"small":            testTable(true),
		"empty pages":      pagedTable([]int{3, 0, 0, 5, 0, 1}),
		"first page empty": pagedTable([]int{0, 4, 4}),
		"big pages":        pagedTable([]int{9000, 20000, 1, 30000, 0, 65000, 2}),
		"many pages":       bigTable(3*shardU32s + 77),
	}
	for name, tbl := range tables {
		for _, next := range []uint64{0, 1, shardU32s - 5, shardU32s - 1, shardU32s, 3*shardU32s - 9000} {
			st, loc, rules := laidOut(t, next, tbl)
			checkSearch(t, st, loc, tbl, rules)
			if t.Failed() {
				t.Fatalf("%s from %d", name, next)
			}
		}
	}
}

// A page index or a page larger than one shard cannot be placed.
func TestLayoutRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		pages []uint32
		want  string
	}{
		{"page index", make([]uint32, shardU32s+1), "page index of 65537 elements"},
		{"page", []uint32{0, 0, shardU32s}, "page 1 has 65536 entries"},
	} {
		if _, err := layoutTable(0, c.pages); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// pagedTable has pages with counts[i] entries each, pc_low spread over the
// page, rules alternating between rsp+8 and rsp+16 and no rule.
func pagedTable(counts []int) *unwind.Table {
	t := &unwind.Table{Base: 0x1000, Pages: []uint32{0},
		Rules: []unwind.Rule{{}, {CFA: unwind.CFARSP, CFAOffset: 8}, {CFA: unwind.CFARSP, CFAOffset: 16}}}
	for _, c := range counts {
		for i := range c {
			t.Entries = append(t.Entries, unwind.Entry{PCLow: uint16(i * 0x10000 / c), Rule: uint16(len(t.Entries) % 3)})
		}
		t.Pages = append(t.Pages, uint32(len(t.Entries)))
	}
	return t
}
