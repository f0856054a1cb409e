package bpf

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
)

// tableSession is a Session holding only the unwind table maps,
// proc_maps and file_tables, from the real object's specs, with a table
// budget of budget bytes: SetProcessModules without loading programs.
func tableSession(t *testing.T, budget uint64) *Session {
	testgate.Root(t)
	spec, err := loadProbee()
	if err != nil {
		t.Fatal(err)
	}
	spec.Maps["unwind_shards"].MaxEntries = shardSlots(budget)
	s := &Session{tables: newTableStore(spec, budget)}
	for name, dst := range map[string]**ebpf.Map{
		"unwind_shards": &s.objs.UnwindShards, "unwind_rules": &s.objs.UnwindRules, "proc_maps": &s.objs.ProcMaps,
		"maps_gen": &s.objs.MapsGen, "file_tables": &s.objs.FileTables,
	} {
		m, err := ebpf.NewMap(spec.Maps[name])
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		t.Cleanup(func() { m.Close() })
		*dst = m
	}
	s.tables.outer = s.objs.UnwindShards
	s.tables.pidGone = func(uint32) bool { return false } // the tests' pids are made up
	t.Cleanup(s.tables.close)
	return s
}

// A list written for a process already gone is deleted at once, and once
// proc_maps is full (lists of processes gone meanwhile) those of
// processes gone make room: a churn of short processes filled it, and
// then no process got its list.
func TestListsOfGonePids(t *testing.T) {
	s := tableSession(t, 1<<20)
	mods := []unwind.Module{module(0x5000_0000, "/bin/a", testTable(false))}
	gone := map[uint32]bool{7: true}
	s.tables.pidGone = func(pid uint32) bool { return gone[pid] }
	if err := s.SetProcessModules(7, mods); err != nil {
		t.Fatal(err)
	}
	var info probeeProcInfo
	if err := s.objs.ProcMaps.Lookup(uint32(7), &info); !errors.Is(err, ebpf.ErrKeyNotExist) {
		t.Errorf("the list of pid 7, gone, is still there (%v)", err)
	}
	max := s.objs.ProcMaps.MaxEntries()
	for pid := range max {
		if err := s.SetProcessModules(int(1000+pid), mods); err != nil {
			t.Fatalf("list %d of %d: %v", pid, max, err)
		}
	}
	for pid := range max / 2 {
		gone[1000+pid] = true
	}
	if err := s.SetProcessModules(99999, mods); err != nil {
		t.Errorf("a list once proc_maps is full of lists of processes gone: %v", err)
	}
	procInfo(t, s, 99999)
}

// readStorage reads elements off..off+n-1 of the table storage through
// the kernel's shard array.
func readStorage(t *testing.T, s *Session, off, n uint64) []uint32 {
	t.Helper()
	out := make([]uint32, 0, n)
	for i := off; i < off+n; {
		var shard *ebpf.Map
		if err := s.objs.UnwindShards.Lookup(uint32(shardOf(i)), &shard); err != nil {
			t.Fatalf("shard of element %d: %v", i, err)
		}
		const chunks = shardU32s / 16 // CHUNK_U32S elements a value
		keys, vals := make([]uint32, chunks), make([][16]uint32, chunks)
		var cursor ebpf.MapBatchCursor
		if got, err := shard.BatchLookup(&cursor, keys, vals, nil); got != chunks {
			t.Fatalf("read shard %d: %d chunks, %v", shardOf(i), got, err)
		}
		shard.Close()
		end := min(off+n, (shardOf(i)+1)<<shardShift)
		flat := unsafe.Slice(&vals[0][0], shardU32s)
		out = append(out, flat[i&(shardU32s-1):i&(shardU32s-1)+end-i]...)
		i = end
	}
	return out
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
	s := tableSession(t, 1<<20)
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
	// a's page index at 0, its entries at 3; b's at 7 and 10.
	if info.Maps[0].EntriesOff != 3 || info.Maps[1].EntriesOff != 3 || info.Maps[2].PagesOff != 7 || info.Maps[2].EntriesOff != 10 {
		t.Errorf("table a twice or b misplaced: %+v", info.Maps[:info.N])
	}
	// Modules load by start: a first, its rules 1 and 2 of the set; b adds
	// its rbp rule as 3.
	wantA, wantB := []uint32{0x1_0010, 0x2_0020, 0x1_0008, 0x40}, []uint32{0x1_0010, 0x3_0020, 0x1_0008, 0x40}
	pages := []uint32{0, 2, 4}
	want := slices.Concat(pages, wantA, pages, wantB)
	if got := readStorage(t, s, 0, 14); !slices.Equal(got, want) {
		t.Errorf("storage %#x, want %#x", got, want)
	}
	set := append(slices.Clone(a.Rules), b.Rules[2])
	if got, want := readArray[[unwind.RuleSize]byte](t, s.objs.UnwindRules, 0, 4), unwind.EncodeRules(set); !slices.Equal(got, want) {
		t.Errorf("rules % x, want % x", got, want)
	}
	// One shard used, and the spares made with it: all 4 of the 1 MiB budget.
	if st := s.TableStats(); st.Tables != 2 || st.Rules != 4 || st.Shards != 4 || st.Bytes != 14*4+4*unwind.RuleSize {
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
		name   string
		table  *unwind.Table
		budget uint64
		rules  int
		want   string
	}{
		{"pc_low out of order", disorder, 1 << 20, 0, "pc_low 0x8 does not follow 0x10"},
		{"rule index past the rules", badRule, 1 << 20, 0, "rule index 7 out of range"},
		{"past the budget", testTable(false), 7*4 - 1, 0, "does not fit in the unwind table budget (28 bytes needed, 0 bytes of 27 bytes in use): unwound without it; raise --unwind-budget"},
		{"rule array full", testTable(true), 1 << 20, 2, wire.ErrTablesFull.Error()},
	}
	for _, c := range cases {
		s := tableSession(t, c.budget)
		if c.rules > 0 {
			s.tables.rules = unwind.NewRuleSet(c.rules)
		}
		mods := []unwind.Module{module(0x5000_0000, "/bin/x", c.table)}
		err := s.SetProcessModules(7, mods)
		if err == nil || !strings.Contains(err.Error(), "/bin/x") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming /bin/x and %q", c.name, err, c.want)
		}
		if c.rules > 0 || c.budget < 1<<20 {
			if !errors.Is(err, wire.ErrTablesFull) {
				t.Errorf("%s: %v is not wire.ErrTablesFull", c.name, err)
			}
		}
		// Reported once: the next process mapping the file gets the
		// mapping without a table and no error.
		if err := s.SetProcessModules(8, mods); err != nil {
			t.Errorf("%s: refused again with %v, want the error only once", c.name, err)
		}
		for _, pid := range []uint32{7, 8} {
			info := procInfo(t, s, pid)
			if st := s.TableStats(); info.N != 1 || info.Maps[0].Flags != 0 || st.Tables != 0 || st.Bytes > unwind.RuleSize || st.Shards != 0 {
				t.Errorf("%s: pid %d mapping %+v, stats %+v: the refused table was used", c.name, pid, info.Maps[0], st)
			}
		}
	}
}

// The budget counts the tables' bytes: a table that fits exactly is
// loaded, the next one past it is not, and later tables that fit are.
func TestTableBudget(t *testing.T) {
	small := &unwind.Table{Pages: []uint32{0, 1}, Entries: []unwind.Entry{{PCLow: 0x10}}, Rules: []unwind.Rule{{}}}
	s := tableSession(t, 7*4+3*4)
	a, b := testTable(false), testTable(true)
	err := s.SetProcessModules(1, []unwind.Module{module(0x5000_0000, "/bin/a", a), module(0x6000_0000, "/lib/b", b), module(0x7000_0000, "/lib/small", small)})
	if !errors.Is(err, wire.ErrTablesFull) || !strings.Contains(err.Error(), "/lib/b: ") || strings.Contains(err.Error(), "/bin/a") || strings.Contains(err.Error(), "/lib/small") {
		t.Fatalf("%v, want wire.ErrTablesFull for /lib/b alone", err)
	}
	info := procInfo(t, s, 1)
	if flags := []uint32{info.Maps[0].Flags, info.Maps[1].Flags, info.Maps[2].Flags}; !slices.Equal(flags, []uint32{1, 0, 1}) {
		t.Errorf("table flags %v, want a and small loaded, b not", flags)
	}
	if st := s.TableStats(); st.Tables != 2 || st.Bytes != 10*4+len(s.tables.rules.Rules)*unwind.RuleSize {
		t.Errorf("stats %+v", st)
	}
}

// Tables beyond one shard and beyond the old fixed 4 MiB, one for 160 MB
// of code: shards are created as tables reach them, and the search finds
// every entry's rule through the kernel's shards.
func TestTableShards(t *testing.T) {
	s := tableSession(t, 64<<20)
	first := bigTable(shardU32s - 5)
	counts := make([]int, 160<<20>>16) // 2560 pages of 64 KiB
	for i := range counts {
		counts[i] = 100 + i%1000
	}
	big := pagedTable(counts) // 1.5M entries: 5.7 MiB
	tables := []*unwind.Table{first, big, testTable(true)}
	var mods []unwind.Module
	for i, tbl := range tables {
		mods = append(mods, module(uint64(i+1)<<32, fmt.Sprintf("/lib/%d", i), tbl))
	}
	if err := s.SetProcessModules(3, mods); err != nil {
		t.Fatal(err)
	}
	used := s.tables.next
	// The shards the tables fill, and the spares made with the last batch.
	if st := s.TableStats(); used < 5<<20/4 || st.Shards != int((used+shardU32s-1)/shardU32s)+shardSpares || st.Bytes != int(used)*4+st.Rules*unwind.RuleSize {
		t.Errorf("stats %+v for %d elements", st, used)
	}
	mem := readStorage(t, s, 0, used)
	info := procInfo(t, s, 3)
	for i, tbl := range tables {
		m := info.Maps[i]
		if m.Flags != 1 {
			t.Fatalf("table %d not loaded: %+v", i, m)
		}
		loc := tableLoc{pagesOff: m.PagesOff, npages: m.Npages, entriesOff: m.EntriesOff}
		checkSearch(t, sliceStorage(mem), loc, tbl, s.tables.rules.Rules)
	}
}

// sliceStorage reads mem, 0 past its end (unwritten shard elements).
func sliceStorage(mem []uint32) storage {
	return func(i uint64) uint32 {
		if i < uint64(len(mem)) {
			return mem[i]
		}
		return 0
	}
}

// llvmLibs are the libraries clang maps whose tables are the largest
// (3.6 and 3.3 MB).
var llvmLibs = []string{"/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"}

// TestTableLLVM loads clang's two big libraries' tables, the second one
// running on past 4 MiB of storage, and finds every CFI row's rule through the
// kernel's shards. tests/install-deps.sh installs clang (and the
// libraries): under PROBEE_REQUIRE_KERNEL=1 they must be there.
func TestTableLLVM(t *testing.T) {
	for _, lib := range llvmLibs {
		if _, err := os.Stat(lib); err != nil {
			if testgate.Required() {
				t.Fatalf("%v: run tests/install-deps.sh (clang)", err)
			}
			t.Skipf("%v: run tests/install-deps.sh (clang)", err)
		}
	}
	s := tableSession(t, DefaultTableBudget)
	cache := unwind.NewCache()
	var tables []*unwind.Table
	var mods []unwind.Module
	for i, lib := range llvmLibs {
		tbl, err := cache.Get(lib)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tbl)
		mods = append(mods, module(uint64(i+1)<<40, lib, tbl))
	}
	start := time.Now()
	if err := s.SetProcessModules(5, mods); err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	info := procInfo(t, s, 5)
	if s.tables.next <= 4<<20/4 {
		t.Errorf("tables end at element %d, want past 4 MiB", s.tables.next)
	}
	mem := readStorage(t, s, 0, s.tables.next)
	for i, tbl := range tables {
		m := info.Maps[i]
		checkSearch(t, sliceStorage(mem), tableLoc{pagesOff: m.PagesOff, npages: m.Npages, entriesOff: m.EntriesOff}, tbl, s.tables.rules.Rules)
	}
	st := s.TableStats()
	t.Logf("%d bytes in %d shards (%d bytes of kernel memory), written in %v", st.Bytes, st.Shards, st.Shards*ShardBytes, loaded)
}

// bigTable has n elements (page index and entries), 1000 entries a page.
func bigTable(n int) *unwind.Table {
	const perPage = 1000
	np := (n - 1 + perPage) / (perPage + 1) // pages; np+1 index elements
	counts := make([]int, np)
	for i := range counts {
		counts[i] = min(perPage, n-1-np-i*perPage)
	}
	return pagedTable(counts)
}

// A table is known by its file version (Table.Key), not its pointer: the
// table cache lets go of a file's table once nothing maps it and builds a
// new one if the file is mapped again; that one is found where the first
// was placed, not placed twice.
func TestTableByKey(t *testing.T) {
	s := tableSession(t, 1<<20)
	first, again := testTable(false), testTable(false)
	first.Key, again.Key = "b-1234-1-2-3-4-5", "b-1234-1-2-3-4-5"
	if err := s.SetProcessModules(42, []unwind.Module{module(0x5000_0000, "/bin/a", first)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProcessModules(43, []unwind.Module{module(0x6000_0000, "/bin/a", again)}); err != nil {
		t.Fatal(err)
	}
	a, b := procInfo(t, s, 42), procInfo(t, s, 43)
	if st := s.TableStats(); st.Tables != 1 || a.Maps[0].EntriesOff != b.Maps[0].EntriesOff {
		t.Errorf("one file version's two tables: %d placed, entries at %d and %d; want one, shared", st.Tables, a.Maps[0].EntriesOff, b.Maps[0].EntriesOff)
	}
}
