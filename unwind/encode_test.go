package unwind

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	tab, _ := libcTable(t)
	data, err := tab.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != tab.Size() {
		t.Fatalf("encoded %d bytes, Size says %d", len(data), tab.Size())
	}
	var back Table
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for i := range tab.Entries {
		pc := tab.EntryPC(i)
		for _, q := range []uint64{pc, pc + 1, pc - 1} {
			r1, ok1 := tab.Lookup(q)
			r2, ok2 := back.Lookup(q)
			if r1 != r2 || ok1 != ok2 {
				t.Fatalf("Lookup(%#x) differs after round trip: %v %v vs %v %v", q, r1, ok1, r2, ok2)
			}
		}
		if i > 0 && tab.EntryPC(i-1) >= pc {
			t.Fatalf("entries not strictly sorted at %d", i)
		}
	}
	if err := back.UnmarshalBinary(data[:len(data)-1]); err == nil {
		t.Error("truncated table accepted")
	}
}

// smallTable has two pages: entries at table pcs 0x10, 0x20, 0x1_0008 and
// an end marker at 0x1_0040.
func smallTable() *Table {
	return &Table{
		Base:    0x4000,
		Pages:   []uint32{0, 2, 4},
		Entries: []Entry{{0x10, 1}, {0x20, 2}, {0x8, 1}, {0x40, 0}},
		Rules:   []Rule{{}, {CFA: CFARSP, CFAOffset: 8}, {CFA: CFARBP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}},
	}
}

// The entries are the u32 values unwind.h reads (e & 0xffff, e >> 16), and
// MarshalBinary writes the same values.
func TestEncodeEntries(t *testing.T) {
	tab := smallTable()
	got, err := NewRuleSet(16).Entries(tab)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{0x0001_0010, 0x0002_0020, 0x0001_0008, 0x0000_0040}
	if len(got) != len(want) {
		t.Fatalf("entries %#x, want %#x", got, want)
	}
	data, err := tab.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		off := HeaderSize + len(tab.Pages)*PageSize + i*EntrySize
		if got[i] != want[i] || !bytes.Equal(data[off:off+EntrySize], le32(want[i])) {
			t.Errorf("entry %d: %#x, marshaled % x, want %#x", i, got[i], data[off:off+EntrySize], want[i])
		}
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// Tables the BPF search would misread are refused, not encoded.
func TestEncodeBounds(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(*Table)
		want  string
	}{
		{"no page index", func(t *Table) { t.Pages = nil }, "does not end at the entry count"},
		{"index past the entries", func(t *Table) { t.Pages[2] = 5 }, "does not end at the entry count"},
		{"index short of the entries", func(t *Table) { t.Entries = append(t.Entries, Entry{0x50, 0}) }, "does not end at the entry count"},
		{"index decreasing", func(t *Table) { t.Pages[1] = 5; t.Pages[2] = 4 }, "not sorted at page 2"},
		{"pc_low out of order", func(t *Table) { t.Entries[1].PCLow = 0x8 }, "entry 1: pc_low 0x8 does not follow 0x10"},
		{"pc_low repeated", func(t *Table) { t.Entries[3].PCLow = 0x8 }, "entry 3: pc_low 0x8 does not follow 0x8"},
		{"rule out of range", func(t *Table) { t.Entries[2].Rule = 3 }, "entry 2: rule index 3 out of range (3 rules)"},
	}
	for _, c := range cases {
		tab := smallTable()
		c.spoil(tab)
		_, err1 := NewRuleSet(16).Entries(tab)
		_, err2 := tab.MarshalBinary()
		for _, err := range []error{err1, err2} {
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want a FormatError saying %q", c.name, err, c.want)
			}
		}
	}
	// A later page's entries start low again: that is no disorder.
	if _, err := NewRuleSet(16).Entries(smallTable()); err != nil {
		t.Errorf("valid table refused: %v", err)
	}
}

// A remapping that misses a rule, or leads past the rules the entries are
// read against, is an error.
func TestEncodeEntriesRemap(t *testing.T) {
	tab := smallTable()
	if _, err := tab.encodeEntries([]uint16{0, 1}, 3); err == nil || !strings.Contains(err.Error(), "rule index 2 has no remapping") {
		t.Errorf("short remap: %v", err)
	}
	if _, err := tab.encodeEntries([]uint16{0, 1, 7}, 7); err == nil || !strings.Contains(err.Error(), "rule index 7 is beyond the 7 rules") {
		t.Errorf("remap past the rules: %v", err)
	}
	if _, err := tab.encodeEntries(nil, 2); err == nil || !strings.Contains(err.Error(), "rule index 2 is beyond the 2 rules") {
		t.Errorf("own index past the rules: %v", err)
	}
}

// Rules are struct unwind_rule: u8 cfa_type, u8 rbp_type, u8
// plt_threshold (a CFAReg rule's register), i8 rbx_slot, i32 cfa_offset,
// i32 rbp_offset, little endian; the table's encoding reads them back.
func TestEncodeRules(t *testing.T) {
	rules := []Rule{
		{CFA: CFAPLT, RBP: RBPOffset, PLTThreshold: 11, CFAOffset: 8, RBPOffset: -16},
		{CFA: CFAReg, Reg: 11, CFAOffset: 1048592, RBXSlot: -2},
	}
	got := EncodeRules(rules)
	want := [][RuleSize]byte{
		{3, 1, 11, 0, 8, 0, 0, 0, 0xf0, 0xff, 0xff, 0xff},
		{9, 0, 11, 0xfe, 0x10, 0, 0x10, 0, 0, 0, 0, 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("EncodeRules = % x, want % x", got, want)
	}
	tab := &Table{Base: 0x4000, Pages: []uint32{0, 2}, Entries: []Entry{{0x10, 1}, {0x20, 2}},
		Rules: append([]Rule{{}}, rules...)}
	data, err := tab.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Table
	if err := back.UnmarshalBinary(data); err != nil || !slices.Equal(back.Rules, tab.Rules) {
		t.Errorf("rules after a round trip: %v, %v; want %v", back.Rules, err, tab.Rules)
	}
}
