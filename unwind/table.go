package unwind

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PageShift splits a table pc into a page (pc >> PageShift) found through
// Table.Pages and a 16-bit low part stored in the entry.
const PageShift = 16

// Entry is one table entry: from pc (page << PageShift | PCLow, relative to
// Table.Base) on, Rules[Rule] applies, up to the next entry's pc.
type Entry struct {
	PCLow uint16
	Rule  uint16
}

// Table is the compact unwind table of one ELF file; doc.go gives the byte
// layout the BPF unwinder reads.
type Table struct {
	// Base is subtracted from an ELF virtual address to get a table pc.
	// The BPF side folds it into the mapping's bias: pc - (bias + Base).
	Base uint64
	// Pages has one element per 64 KiB page of table pcs plus one:
	// Entries[Pages[p]:Pages[p+1]] are the entries whose pc is in page p.
	Pages   []uint32
	Entries []Entry // sorted by pc; the last entry is always a CFANone marker
	Rules   []Rule  // distinct rules; Rules[0] is always the CFANone rule
	Stats   Stats
	Loads   []Segment // PT_LOAD headers, for load-bias computation
}

// Stats describes how a table was built.
type Stats struct {
	FDEs        int
	Rows        int // CFI rows (distinct locations) before merging
	PLTRows     int
	SignalRows  int
	EndRows     int // outermost frames (RA undefined)
	Unsupported int // rows reduced to CFAUnsupported
	BadFDEs     int // FDEs whose instructions failed to decode (marked unsupported)
	Overlaps    int // rows dropped because a later FDE starts inside an earlier one
	FirstError  string
}

// PadGap is the alignment of functions: a gap shorter than PadGap before an
// FDE that starts PadGap-aligned is alignment padding, and gets no
// end-of-function marker.
const PadGap = 16

// builder accumulates entries with absolute pcs.
type builder struct {
	pcs   []uint64
	rules []uint16
	index map[Rule]uint16
	table *Table
}

func newBuilder() *builder {
	t := &Table{Rules: []Rule{{}}}
	return &builder{index: map[Rule]uint16{{}: 0}, table: t}
}

func (b *builder) ruleIndex(r Rule) (uint16, error) {
	if n := len(b.rules); n > 0 && b.table.Rules[b.rules[n-1]] == r {
		return b.rules[n-1], nil
	}
	if i, ok := b.index[r]; ok {
		return i, nil
	}
	if len(b.table.Rules) > math.MaxUint16 {
		return 0, fmt.Errorf("more than %d distinct unwind rules", math.MaxUint16+1)
	}
	i := uint16(len(b.table.Rules))
	b.table.Rules = append(b.table.Rules, r)
	b.index[r] = i
	return i, nil
}

// add appends (pc, rule), replacing an entry at the same pc and skipping a
// rule equal to the previous entry's.
func (b *builder) add(pc uint64, r Rule) error {
	idx, err := b.ruleIndex(r)
	if err != nil {
		return err
	}
	n := len(b.pcs)
	if n > 0 && b.pcs[n-1] == pc {
		b.pcs, b.rules = b.pcs[:n-1], b.rules[:n-1]
		n--
	}
	if n > 0 && b.rules[n-1] == idx {
		return nil
	}
	b.pcs = append(b.pcs, pc)
	b.rules = append(b.rules, idx)
	return nil
}

// clip drops entries at or after pc (a later FDE starting inside an earlier one wins).
func (b *builder) clip(pc uint64) {
	for n := len(b.pcs); n > 0 && b.pcs[n-1] > pc; n-- {
		b.pcs, b.rules = b.pcs[:n-1], b.rules[:n-1]
		b.table.Stats.Overlaps++
	}
}

func (b *builder) countRow(r Rule) {
	s := &b.table.Stats
	s.Rows++
	switch r.CFA {
	case CFAPLT:
		s.PLTRows++
	case CFASignal:
		s.SignalRows++
	case CFAEndOfStack:
		s.EndRows++
	case CFAUnsupported:
		s.Unsupported++
	}
}

// sortFDEs orders FDEs by start; of FDEs with the same start the first given
// (.eh_frame before .debug_frame) is kept. Empty FDEs are dropped.
func sortFDEs(frames []*Frames) []*FDE {
	var all []*FDE
	for _, fr := range frames {
		for i := range fr.FDEs {
			if f := &fr.FDEs[i]; f.End > f.Start {
				all = append(all, f)
			}
		}
	}
	slices.SortStableFunc(all, func(a, b *FDE) int { return cmp.Compare(a.Start, b.Start) })
	return slices.CompactFunc(all, func(a, b *FDE) bool { return a.Start == b.Start })
}

// Build evaluates every FDE of the given sections (in priority order) into a
// merged table.
func Build(frames ...*Frames) (*Table, error) {
	b := newBuilder()
	var rows []Row
	var in interp
	fdes := sortFDEs(frames)
	b.pcs = make([]uint64, 0, len(fdes)*6)
	b.rules = make([]uint16, 0, len(fdes)*6)
	for i, f := range fdes {
		b.table.Stats.FDEs++
		var err error
		rows, err = in.rows(f, rows[:0])
		if err != nil {
			b.badFDE(f, err)
			rows = append(rows[:0], Row{PC: f.Start, Rule: ruleUnsupported})
		}
		b.clip(f.Start)
		next := uint64(math.MaxUint64)
		if i+1 < len(fdes) {
			next = fdes[i+1].Start
		}
		if err := b.addFDE(f, rows, next); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

func (b *builder) badFDE(f *FDE, err error) {
	s := &b.table.Stats
	s.BadFDEs++
	if s.FirstError == "" {
		s.FirstError = fmt.Sprintf("FDE at %#x (pc %#x..%#x): %v", f.Offset, f.Start, f.End, err)
	}
}

// addFDE adds the rows of f and its end marker. The marker is left out when
// the next FDE starts within alignment padding (less than PadGap bytes later):
// padding is never executed, and letting the last rule run over it lets
// adjacent functions with equal rules merge.
func (b *builder) addFDE(f *FDE, rows []Row, next uint64) error {
	for _, r := range rows {
		b.countRow(r.Rule)
		if err := b.add(r.PC, r.Rule); err != nil {
			return err
		}
	}
	if next >= f.End && next-f.End < PadGap && next%PadGap == 0 {
		return nil
	}
	return b.add(f.End, Rule{})
}

func (b *builder) finish() (*Table, error) {
	t := b.table
	if len(b.pcs) == 0 {
		t.Pages = []uint32{0}
		return t, nil
	}
	t.Base = b.pcs[0]
	span := b.pcs[len(b.pcs)-1] - t.Base
	if span > math.MaxUint32 || len(b.pcs) > math.MaxUint32 {
		return nil, fmt.Errorf("unwind info spans %#x bytes, more than the 4 GiB a table can address", span)
	}
	npages := int(span>>PageShift) + 1
	t.Pages = make([]uint32, npages+1)
	t.Entries = make([]Entry, len(b.pcs))
	page := 0
	for i, pc := range b.pcs {
		rel := pc - t.Base
		for ; page <= int(rel>>PageShift); page++ {
			t.Pages[page] = uint32(i)
		}
		t.Entries[i] = Entry{PCLow: uint16(rel), Rule: b.rules[i]}
	}
	for ; page <= npages; page++ {
		t.Pages[page] = uint32(len(b.pcs))
	}
	return t, nil
}

// Lookup returns the rule for pc, an ELF virtual address (runtime pc minus
// the mapping's load bias; pass pc-1 for return addresses). It does the
// search the BPF unwinder does: find the page, then the last entry of the
// page whose PCLow <= the pc's low 16 bits; when there is none, the entry
// just before the page (the last one of an earlier page) applies.
func (t *Table) Lookup(pc uint64) (Rule, bool) {
	if pc < t.Base || len(t.Entries) == 0 {
		return Rule{}, false
	}
	rel := pc - t.Base
	page := rel >> PageShift
	if page >= uint64(len(t.Pages)-1) {
		return Rule{}, false // past the final end marker
	}
	lo, hi := int(t.Pages[page]), int(t.Pages[page+1])
	low := uint16(rel)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.Entries[mid].PCLow <= low {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return Rule{}, false
	}
	r := t.Rules[t.Entries[lo-1].Rule]
	return r, r.CFA != CFANone
}

// EntryPC returns the ELF virtual address at which entry i starts.
func (t *Table) EntryPC(i int) uint64 {
	page, _ := slices.BinarySearchFunc(t.Pages, uint32(i+1), cmp.Compare[uint32])
	return t.Base + uint64(page-1)<<PageShift + uint64(t.Entries[i].PCLow)
}
