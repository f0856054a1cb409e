package unwind

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Sizes of the encoded structures (see doc.go for the layout).
const (
	HeaderSize = 32
	PageSize   = 4  // one u32 per page index element
	EntrySize  = 4  // u16 pc_low, u16 rule
	RuleSize   = 12 // u8 cfa_type, u8 rbp_type, u8 plt_threshold, i8 rbx_slot, i32 cfa_offset, i32 rbp_offset
)

// Magic starts an encoded table; FormatVersion is its layout version.
const (
	Magic         = "PBUW"
	FormatVersion = 1
)

// BuilderVersion is the version of how tables are built from CFI: bump it
// with any change that makes the table built from a file differ (a parser
// fix, a new rule kind, another way of merging rows). With FormatVersion
// it decides whether a table an earlier probee saved (unwind/diskcache)
// may be used.
const BuilderVersion = 9 // 3: rules for a .plt without CFI; 4: for .init and .fini (synth.go); 5: rbx (CFARBX, RBXSlot); 6: crtbegin code (crtstuff.go); 7: CFAReg; 8: stack heights of function symbols no FDE covers (symframes.go); 9: .init and .fini of files without other CFI

// Size is the encoded size of t in bytes.
func (t *Table) Size() int {
	return HeaderSize + len(t.Pages)*PageSize + len(t.Entries)*EntrySize + len(t.Rules)*RuleSize
}

// MarshalBinary encodes t as header, pages, entries, rules (doc.go), with
// the entry and rule encodings the BPF maps get. It fails on a table that
// breaks the layout (see validate).
func (t *Table) MarshalBinary() ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	entries, err := t.encodeEntries(nil, len(t.Rules))
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	b := make([]byte, 0, t.Size())
	b = append(b, Magic...)
	b = le.AppendUint32(b, FormatVersion)
	b = le.AppendUint64(b, t.Base)
	b = le.AppendUint32(b, uint32(len(t.Pages)-1))
	b = le.AppendUint32(b, uint32(len(t.Entries)))
	b = le.AppendUint32(b, uint32(len(t.Rules)))
	b = le.AppendUint32(b, 0)
	for _, p := range t.Pages {
		b = le.AppendUint32(b, p)
	}
	for _, e := range entries {
		b = le.AppendUint32(b, e)
	}
	for _, r := range t.Rules {
		enc := encodeRule(r)
		b = append(b, enc[:]...)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary produced (tables only: Stats
// and Loads are not encoded), and checks it as MarshalBinary does.
func (t *Table) UnmarshalBinary(data []byte) error {
	le := binary.LittleEndian
	if len(data) < HeaderSize || string(data[:4]) != Magic || le.Uint32(data[4:]) != FormatVersion {
		return &FormatError{Section: "unwind table", Msg: "bad magic or version"}
	}
	np, ne, nr := uint64(le.Uint32(data[16:]))+1, uint64(le.Uint32(data[20:])), uint64(le.Uint32(data[24:]))
	if np*PageSize+ne*EntrySize+nr*RuleSize != uint64(len(data)-HeaderSize) {
		return &FormatError{Section: "unwind table", Offset: HeaderSize, Msg: "counts do not match the data size"}
	}
	t.Base = le.Uint64(data[8:])
	p := data[HeaderSize:]
	t.Pages = make([]uint32, np)
	for i := range t.Pages {
		t.Pages[i] = le.Uint32(p[i*PageSize:])
	}
	p = p[np*PageSize:]
	t.Entries = make([]Entry, ne)
	for i := range t.Entries {
		v := le.Uint32(p[i*EntrySize:])
		t.Entries[i] = Entry{PCLow: uint16(v), Rule: uint16(v >> 16)}
	}
	r := &reader{buf: p[ne*EntrySize:]}
	t.Rules = make([]Rule, nr)
	for i := range t.Rules {
		t.Rules[i] = decodeRule(r)
	}
	return t.validate()
}

// validate checks the invariants the lookup (Lookup, and the BPF search
// over the same layout) relies on: the entry count fits the u32 page
// index, the page index ends at it and never decreases, entries ascend by
// pc_low within each page, and every rule index names a rule.
func (t *Table) validate() error {
	bad := func(format string, a ...any) error {
		return &FormatError{Section: "unwind table", Msg: fmt.Sprintf(format, a...)}
	}
	if uint64(len(t.Entries)) > math.MaxUint32 {
		return bad("%d entries: more than a u32 page index can address", len(t.Entries))
	}
	if len(t.Pages) == 0 || t.Pages[len(t.Pages)-1] != uint32(len(t.Entries)) {
		return bad("page index does not end at the entry count")
	}
	for p := 1; p < len(t.Pages); p++ {
		if t.Pages[p] < t.Pages[p-1] {
			return bad("page index is not sorted at page %d", p)
		}
	}
	// Sorted and ending at the entry count: every page's range is in
	// bounds. One pass over the entries (a cached table is checked as it
	// is loaded): p is entry i's page, the last with Pages[p] <= i.
	p := 0
	for i, e := range t.Entries {
		for p+1 < len(t.Pages) && t.Pages[p+1] <= uint32(i) {
			p++
		}
		if int(e.Rule) >= len(t.Rules) {
			return bad("entry %d: rule index %d out of range (%d rules)", i, e.Rule, len(t.Rules))
		}
		if t.Pages[p] < uint32(i) && e.PCLow <= t.Entries[i-1].PCLow {
			return bad("entry %d: pc_low %#x does not follow %#x in page %d", i, e.PCLow, t.Entries[i-1].PCLow, p)
		}
	}
	return nil
}

// encodeEntries returns the entries of a validated t as the BPF code reads
// them: one u32 each, pc_low | rule << 16 (the __u32 values of unwind.h's
// unwind_entries map; as bytes, the little-endian u16 pair of doc.go). remap, when not nil, translates t's rule indexes to those of a
// shared RuleSet; every resulting index must be below nrules, the number
// of rules the entries are read against.
func (t *Table) encodeEntries(remap []uint16, nrules int) ([]uint32, error) {
	out := make([]uint32, len(t.Entries))
	for i, e := range t.Entries {
		r := e.Rule
		if remap != nil {
			if int(r) >= len(remap) {
				return nil, fmt.Errorf("entry %d: rule index %d has no remapping (%d given)", i, r, len(remap))
			}
			r = remap[r]
		}
		if int(r) >= nrules {
			return nil, fmt.Errorf("entry %d: rule index %d is beyond the %d rules it is read against", i, r, nrules)
		}
		out[i] = uint32(e.PCLow) | uint32(r)<<16
	}
	return out, nil
}

// EncodeRules returns rules as the BPF rule map holds them: struct
// unwind_rule, RuleSize bytes each (doc.go).
func EncodeRules(rules []Rule) [][RuleSize]byte {
	out := make([][RuleSize]byte, len(rules))
	for i, r := range rules {
		out[i] = encodeRule(r)
	}
	return out
}

func encodeRule(r Rule) [RuleSize]byte {
	var b [RuleSize]byte
	b[0], b[1], b[2], b[3] = byte(r.CFA), byte(r.RBP), r.PLTThreshold, byte(r.RBXSlot)
	if r.CFA == CFAReg {
		b[2] = r.Reg
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(r.CFAOffset))
	binary.LittleEndian.PutUint32(b[8:], uint32(r.RBPOffset))
	return b
}

func decodeRule(r *reader) Rule {
	var x Rule
	x.CFA, x.RBP, x.PLTThreshold, x.RBXSlot = CFAType(r.u8()), RBPType(r.u8()), r.u8(), int8(r.u8())
	if x.CFA == CFAReg {
		x.Reg, x.PLTThreshold = x.PLTThreshold, 0
	}
	x.CFAOffset, x.RBPOffset = int32(r.u32()), int32(r.u32())
	return x
}
