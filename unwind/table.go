package unwind

import (
	"cmp"
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
	// Key names the file version the table was built from
	// (internal/fileid.ID.Key), set by the Cache; "" for a table built
	// otherwise (the vDSO's, tests'). Not saved with the table.
	Key string
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
