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
	RuleSize   = 12 // u8 cfa_type, u8 rbp_type, u8 plt_threshold, u8 0, i32 cfa_offset, i32 rbp_offset
)

// Magic starts an encoded table; FormatVersion is its layout version.
const (
	Magic         = "PBUW"
	FormatVersion = 1
)

// Size is the encoded size of t in bytes.
func (t *Table) Size() int {
	return HeaderSize + len(t.Pages)*PageSize + len(t.Entries)*EntrySize + len(t.Rules)*RuleSize
}

// MarshalBinary encodes t as header, pages, entries, rules (doc.go).
func (t *Table) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, t.Size())
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, FormatVersion)
	b = binary.LittleEndian.AppendUint64(b, t.Base)
	b = binary.LittleEndian.AppendUint32(b, uint32(max(len(t.Pages)-1, 0)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Entries)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Rules)))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = t.AppendPages(b)
	b, err := t.AppendEntries(b, nil)
	if err != nil {
		return nil, err
	}
	return AppendRules(b, t.Rules), nil
}

// UnmarshalBinary decodes what MarshalBinary produced (tables only: Stats,
// BuildID and Loads are not encoded).
func (t *Table) UnmarshalBinary(data []byte) error {
	r := &reader{buf: data}
	if string(r.bytes(4)) != Magic || r.u32() != FormatVersion {
		return &FormatError{Section: "unwind table", Msg: "bad magic or version"}
	}
	t.Base = r.u64()
	np, ne, nr := uint64(r.u32())+1, uint64(r.u32()), uint64(r.u32())
	r.u32()
	if r.err || np*PageSize+ne*EntrySize+nr*RuleSize != uint64(r.left()) {
		return &FormatError{Section: "unwind table", Offset: int64(r.pos), Msg: "counts do not match the data size"}
	}
	t.Pages = make([]uint32, np)
	for i := range t.Pages {
		t.Pages[i] = r.u32()
	}
	t.Entries = make([]Entry, ne)
	for i := range t.Entries {
		t.Entries[i] = Entry{PCLow: r.u16(), Rule: r.u16()}
	}
	t.Rules = make([]Rule, nr)
	for i := range t.Rules {
		t.Rules[i] = decodeRule(r)
	}
	return t.validate()
}

// validate checks the invariants Lookup relies on.
func (t *Table) validate() error {
	bad := func(msg string) error { return &FormatError{Section: "unwind table", Msg: msg} }
	if len(t.Pages) == 0 || t.Pages[len(t.Pages)-1] != uint32(len(t.Entries)) {
		return bad("page index does not end at the entry count")
	}
	for i := 1; i < len(t.Pages); i++ {
		if t.Pages[i] < t.Pages[i-1] {
			return bad("page index is not sorted")
		}
	}
	for _, e := range t.Entries {
		if int(e.Rule) >= len(t.Rules) {
			return bad(fmt.Sprintf("rule index %d out of range", e.Rule))
		}
	}
	return nil
}

// AppendPages appends the page index: len(Pages) u32 values.
func (t *Table) AppendPages(dst []byte) []byte {
	for _, p := range t.Pages {
		dst = binary.LittleEndian.AppendUint32(dst, p)
	}
	return dst
}

// AppendEntries appends the entries. remap, when not nil, translates the
// table's rule indexes to indexes of a shared RuleSet (RuleSet.Add).
func (t *Table) AppendEntries(dst []byte, remap []uint16) ([]byte, error) {
	for _, e := range t.Entries {
		r := e.Rule
		if remap != nil {
			if int(r) >= len(remap) {
				return nil, fmt.Errorf("rule index %d has no remapping (%d given)", r, len(remap))
			}
			r = remap[r]
		}
		dst = binary.LittleEndian.AppendUint16(dst, e.PCLow)
		dst = binary.LittleEndian.AppendUint16(dst, r)
	}
	return dst, nil
}

// AppendRules appends rules in the RuleSize-byte encoding.
func AppendRules(dst []byte, rules []Rule) []byte {
	for _, r := range rules {
		dst = append(dst, byte(r.CFA), byte(r.RBP), r.PLTThreshold, 0)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.CFAOffset))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(r.RBPOffset))
	}
	return dst
}

func decodeRule(r *reader) Rule {
	var x Rule
	x.CFA, x.RBP, x.PLTThreshold = CFAType(r.u8()), RBPType(r.u8()), r.u8()
	r.u8()
	x.CFAOffset, x.RBPOffset = int32(r.u32()), int32(r.u32())
	return x
}

// RuleSet is a rule array shared by several tables (the BPF side keeps one
// rule map for all binaries). Index 0 is the CFANone rule.
type RuleSet struct {
	Rules []Rule
	index map[Rule]uint16
}

// NewRuleSet returns a set holding only the CFANone rule.
func NewRuleSet() *RuleSet {
	return &RuleSet{Rules: []Rule{{}}, index: map[Rule]uint16{{}: 0}}
}

// Add interns t's rules and returns remap[i] = shared index of t.Rules[i],
// for AppendEntries. It fails when the set would exceed 65536 rules.
func (s *RuleSet) Add(t *Table) ([]uint16, error) {
	remap := make([]uint16, len(t.Rules))
	for i, r := range t.Rules {
		j, ok := s.index[r]
		if !ok {
			if len(s.Rules) > math.MaxUint16 {
				return nil, fmt.Errorf("shared rule set is full (%d rules)", len(s.Rules))
			}
			j = uint16(len(s.Rules))
			s.Rules = append(s.Rules, r)
			s.index[r] = j
		}
		remap[i] = j
	}
	return remap, nil
}
