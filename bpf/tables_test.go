package bpf

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
)

// tableSession is a Session holding only the unwind table maps and
// proc_maps, from the real object's specs with the entry and page arrays
// cut to the sizes given: SetProcessModules without loading programs.
func tableSession(t *testing.T, entries, pages uint32) *Session {
	testgate.Root(t)
	spec, err := loadProbee()
	if err != nil {
		t.Fatal(err)
	}
	spec.Maps["unwind_entries"].MaxEntries = entries
	spec.Maps["unwind_pages"].MaxEntries = pages
	s := &Session{tables: newTableStore(spec)}
	for name, dst := range map[string]**ebpf.Map{
		"unwind_entries": &s.objs.UnwindEntries, "unwind_pages": &s.objs.UnwindPages,
		"unwind_rules": &s.objs.UnwindRules, "proc_maps": &s.objs.ProcMaps,
	} {
		m, err := ebpf.NewMap(spec.Maps[name])
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		t.Cleanup(func() { m.Close() })
		*dst = m
	}
	return s
}

// testTable has two pages: entries at table pcs 0x10, 0x20, 0x1_0008 and
// an end marker at 0x1_0040; rule cfa is rbp+16 with an RBPOffset of -16
// when big is set, rsp+8 otherwise.
func testTable(big bool) *unwind.Table {
	r := unwind.Rule{CFA: unwind.CFARSP, CFAOffset: 8}
	if big {
		r = unwind.Rule{CFA: unwind.CFARBP, CFAOffset: 16, RBP: unwind.RBPOffset, RBPOffset: -16}
	}
	return &unwind.Table{
		Base:    0x4000,
		Pages:   []uint32{0, 2, 4},
		Entries: []unwind.Entry{{PCLow: 0x10, Rule: 1}, {PCLow: 0x20, Rule: 2}, {PCLow: 0x8, Rule: 1}, {PCLow: 0x40}},
		Rules:   []unwind.Rule{{}, {CFA: unwind.CFAPLT, CFAOffset: 8, PLTThreshold: 11}, r},
	}
}

func module(start uint64, path string, t *unwind.Table) unwind.Module {
	return unwind.Module{Start: start, End: start + 0x20000, Bias: 0x1000, Path: path, Table: t}
}

func readArray[T any](t *testing.T, m *ebpf.Map, off, n uint32) []T {
	t.Helper()
	out := make([]T, n)
	for i := range out {
		if err := m.Lookup(off+uint32(i), &out[i]); err != nil {
			t.Fatalf("lookup %d: %v", off+uint32(i), err)
		}
	}
	return out
}

func procInfo(t *testing.T, s *Session, pid uint32) probeeProcInfo {
	t.Helper()
	var info probeeProcInfo
	if err := s.objs.ProcMaps.Lookup(pid, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// The maps hold unwind's encodings: entries as pc_low | rule << 16 with
// rules remapped into the shared set, rules as struct unwind_rule.
func TestTableWrite(t *testing.T) {
	s := tableSession(t, 64, 16)
	a, b := testTable(false), testTable(true)
	mods := []unwind.Module{module(0x7000_0000, "/lib/b.so", b), module(0x5000_0000, "/bin/a", a), module(0x6000_0000, "/lib/a-again", a)}
	if err := s.SetProcessModules(42, mods); err != nil {
		t.Fatal(err)
	}
	info := procInfo(t, s, 42)
	if info.N != 3 || info.Maps[0].Start != 0x5000_0000 || info.Maps[2].Start != 0x7000_0000 {
		t.Fatalf("mappings not sorted by start: %+v", info.Maps[:info.N])
	}
	for i, m := range info.Maps[:info.N] {
		if m.Flags != 1 || m.Npages != 2 || m.Bias != 0x1000+0x4000 {
			t.Errorf("mapping %d: %+v", i, m)
		}
	}
	if info.Maps[0].EntriesOff != info.Maps[1].EntriesOff || info.Maps[2].EntriesOff != 4 || info.Maps[2].PagesOff != 3 {
		t.Errorf("table a twice or b misplaced: %+v", info.Maps[:info.N])
	}
	// Modules load by start: a first, its rules 1 and 2 of the set; b adds
	// its rbp rule as 3.
	wantA, wantB := []uint32{0x1_0010, 0x2_0020, 0x1_0008, 0x40}, []uint32{0x1_0010, 0x3_0020, 0x1_0008, 0x40}
	if got := readArray[uint32](t, s.objs.UnwindEntries, 0, 8); !slices.Equal(got[:4], wantA) || !slices.Equal(got[4:], wantB) {
		t.Errorf("entries %#x, want %#x then %#x", got, wantA, wantB)
	}
	set := append(slices.Clone(a.Rules), b.Rules[2])
	if got, want := readArray[[unwind.RuleSize]byte](t, s.objs.UnwindRules, 0, 4), unwind.EncodeRules(set); !slices.Equal(got, want) {
		t.Errorf("rules % x, want % x", got, want)
	}
	if got := readArray[uint32](t, s.objs.UnwindPages, 0, 6); !slices.Equal(got, []uint32{0, 2, 4, 0, 2, 4}) {
		t.Errorf("pages %v", got)
	}
	if st := s.TableStats(); st.Tables != 2 || st.Rules != 4 {
		t.Errorf("stats %+v", st)
	}
}

// Tables the BPF search would misread, or that do not fit, are refused
// with an error: their mapping is walked with frame pointers and nothing
// of them is written.
func TestTableBounds(t *testing.T) {
	disorder := testTable(false)
	disorder.Entries[1].PCLow = 0x8
	badRule := testTable(false)
	badRule.Entries[2].Rule = 7
	cases := []struct {
		name    string
		table   *unwind.Table
		entries uint32
		rules   int
		want    string
	}{
		{"pc_low out of order", disorder, 64, 0, "pc_low 0x8 does not follow 0x10"},
		{"rule index past the rules", badRule, 64, 0, "rule index 7 out of range"},
		{"entry array full", testTable(false), 3, 0, ErrTablesFull.Error()},
		{"rule array full", testTable(true), 64, 2, ErrTablesFull.Error()},
	}
	for _, c := range cases {
		s := tableSession(t, c.entries, 16)
		if c.rules > 0 {
			s.tables.rules = unwind.NewRuleSet(c.rules)
		}
		err := s.SetProcessModules(7, []unwind.Module{module(0x5000_0000, "/bin/x", c.table)})
		if err == nil || !strings.Contains(err.Error(), "/bin/x") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming /bin/x and %q", c.name, err, c.want)
		}
		if c.rules > 0 && !errors.Is(err, ErrTablesFull) {
			t.Errorf("%s: %v is not ErrTablesFull", c.name, err)
		}
		info := procInfo(t, s, 7)
		if st := s.TableStats(); info.N != 1 || info.Maps[0].Flags != 0 || st.Tables != 0 || st.Bytes > unwind.RuleSize {
			t.Errorf("%s: mapping %+v, stats %+v: the refused table was used", c.name, info.Maps[0], st)
		}
	}
}
