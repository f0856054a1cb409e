package bpf

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/unwind"
	"golang.org/x/sys/unix"
)

// The table storage (unwind_shards in unwind_maps.h): one u32 space, in shards
// created as tables need them; see doc.go.
const (
	shardShift = int(probeeLimitSHARD_SHIFT)
	shardU32s  = 1 << shardShift
	// ShardBytes is the kernel memory of one storage shard: what the
	// storage holds beyond the tables' own bytes is less than one shard.
	ShardBytes = shardU32s * 4
	// DefaultTableBudget is the table budget when Options.TableBudget is 0:
	// clang with libLLVM, libclang-cpp, libstdc++ and libc needs 7 MiB.
	DefaultTableBudget = 256 << 20
	// MaxTableBudget is the most the u32 element offsets address.
	MaxTableBudget = 16 << 30
	maxRules       = int(probeeLimitMAX_RULES)    // unwind_rules' size
	maxMappings    = int(probeeLimitMAX_MAPPINGS) // per process
)

// tableLoc is where one binary's table lives in the table storage, and
// its placement tag (enum mapping_flag: 0 in storage no table used before).
type tableLoc struct {
	pagesOff, npages, entriesOff uint32
	tag                          uint32
}

// flags is the flags of a mapping of the table.
func (l tableLoc) flags() uint32 { return mappingTable | l.tag<<mappingTagShift }

// placed is a table in the table storage.
type placed struct {
	loc   tableLoc
	span  span   // the storage elements it holds, the padding before it included
	path  string // its key in binBytes
	bytes int    // its share there
}

// tableStore places tables in the table storage once per table (tables
// come from unwind.Cache, shared by file identity), page index then
// entries, and interns their rules. A table is known by its file version
// (unwind.Table.Key), not by its pointer: the Cache lets go of the tables
// of files no longer mapped (unwind.Cache.Evict), and one built again for
// a file mapped again is found here, not placed twice; nor is it kept
// alive by this store. The tables of the files the caller forgets are
// released once nothing in the kernel refers to them (ForgetFiles,
// release.go), and their ranges reused (freelist.go); the rules are
// interned for the session.
type tableStore struct {
	rules        *unwind.RuleSet
	rulesWritten int
	loaded       map[any]*placed // by tableID
	refused      map[any]refusal // by tableID: reported once, then unwound with frame pointers until room frees
	binBytes     map[string]int  // path of the first module of each table -> bytes
	next         uint64          // the storage's end: tables are appended there
	high         uint64          // the highest end it had: no table used the storage past it
	free         freeList        // released tables' ranges below next
	tags         uint32          // the tag given last (tableLoc)
	released     int             // tables released so far
	freed        uint64          // times released ranges were made reusable (reclaim)
	// What refers to the tables (release.go).
	byFile  map[probeeFileKey][]any // a file as the maps show it -> the tables (or refusals) loaded for it
	lists   map[uint32][]any        // pid -> the tables of its mapping list, as written last
	orphans map[any]bool            // tables of forgotten files that something still referred to
	now     func() time.Time        // time.Now; tests set it

	budget       uint64               // bytes the tables may take
	outer        *ebpf.Map            // unwind_shards
	shardSpec    *ebpf.MapSpec        // its inner map
	nshards      uint32               // shards created
	open         map[uint32]*ebpf.Map // shards created and not passed yet: the one being filled, the spares
	listsWritten uint64               // mapping lists written: element MAPS_GEN_USER of maps_gen
	pidGone      func(uint32) bool    // tests: whether a process is gone (else kill(pid, 0))
}

// newTableStore returns an empty store for tables of at most budget bytes.
func newTableStore(spec *ebpf.CollectionSpec, budget uint64) tableStore {
	return tableStore{rules: unwind.NewRuleSet(maxRules), loaded: map[any]*placed{},
		refused: map[any]refusal{}, byFile: map[probeeFileKey][]any{}, lists: map[uint32][]any{},
		orphans: map[any]bool{}, now: time.Now, budget: budget,
		shardSpec: spec.Maps["unwind_shards"].InnerMap, open: map[uint32]*ebpf.Map{}}
}

// TableStats describes the unwind tables loaded into the kernel.
type TableStats struct {
	Tables int // distinct binaries
	Bytes  int // bytes of table data in the storage (pages, entries, rules)
	Rules  int
	// Released is the number of tables released so far (ForgetFiles);
	// Free is the bytes of storage they left that no table took since,
	// reusable or in their grace.
	Released, Free int
	// Shards is the number of table storage shards (ShardBytes each),
	// the spares created ahead included (shards.go).
	Shards int
	// ByBinary is each table's own bytes (pages and entries; the rules
	// are shared), by the path of the first mapping it was loaded for.
	ByBinary map[string]int
}

// SetProcessModules writes the unwind mappings of process pid: every
// module's table is loaded on first use, then the process's sorted mapping
// array replaces the previous one. Modules beyond the map's capacity (256)
// are left out; tables that do not fit fall back to frame pointers.
func (s *Session) SetProcessModules(pid int, mods []unwind.Module) error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	mods = slices.Clone(mods)
	slices.SortFunc(mods, func(a, b unwind.Module) int { return cmp.Compare(a.Start, b.Start) })
	var info probeeProcInfo
	var errs []error
	var ids []any // the tables the list refers to
	for _, m := range mods {
		if int(info.N) == maxMappings {
			errs = append(errs, fmt.Errorf("pid %d has more than %d executable mappings: the rest are not unwound", pid, maxMappings))
			break
		}
		um, err := s.moduleMapping(m)
		if err != nil && !errors.Is(err, errRefused) { // reported when it was refused
			errs = append(errs, err)
		}
		if um.Flags&mappingTable != 0 {
			ids = append(ids, tableID(m.Table))
		}
		info.Maps[info.N] = um
		info.N++
	}
	if err := s.putList(uint32(pid), &info); err != nil {
		errs = append(errs, fmt.Errorf("write unwind mappings of pid %d: %w", pid, err))
		ids = append(ids, s.tables.lists[uint32(pid)]...) // the list before may be there still
	}
	s.tables.setList(uint32(pid), ids)
	if err := s.listWritten(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// putList writes pid's mapping list. A process gone before its list was
// written (its exit deleted the one before) has it deleted again at once:
// such lists filled proc_maps (4096) after ~90 s of a churn of 350
// short processes a second, and then no process got a list (E2BIG: walked
// without their tables). Should it fill all the same (zombies, a pid
// gone between the check and the write), the lists of processes gone
// are deleted and the write tried again.
func (s *Session) putList(pid uint32, info *probeeProcInfo) error {
	err := s.objs.ProcMaps.Put(pid, info)
	if errors.Is(err, unix.E2BIG) {
		s.deleteGoneLists()
		err = s.objs.ProcMaps.Put(pid, info)
	}
	if err == nil && s.gone(pid) {
		s.objs.ProcMaps.Delete(pid)
	}
	return err
}

// gone reports whether process pid is gone (the tests' fake pids are
// not: tableSession).
func (s *Session) gone(pid uint32) bool {
	if s.tables.pidGone != nil {
		return s.tables.pidGone(pid)
	}
	return unix.Kill(int(pid), 0) == unix.ESRCH
}

// deleteGoneLists deletes the mapping lists of processes gone.
func (s *Session) deleteGoneLists() {
	live, err := s.liveLists()
	if err != nil {
		return
	}
	for pid := range live {
		if s.gone(pid) {
			s.objs.ProcMaps.Delete(pid)
		}
	}
}

// listWritten tells the walks that a mapping list changed: each per-CPU
// walk state keeps the mappings its last walk found while the counts of
// maps_gen stay the same (mappings.h: mappings_keep). Called after the write, so
// that no walk keeps what it found before.
func (s *Session) listWritten() error {
	s.tables.listsWritten++
	if err := s.objs.MapsGen.Put(uint32(probeeMapsGenIndexMAPS_GEN_USER), s.tables.listsWritten); err != nil {
		return fmt.Errorf("count the mapping lists written: %w", err)
	}
	return nil
}

// TableStats reports what SetProcessModules loaded so far.
func (s *Session) TableStats() TableStats {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	ts := &s.tables
	return TableStats{
		Tables:   len(ts.loaded),
		Bytes:    int(ts.inUse())*4 + ts.rulesWritten*unwind.RuleSize,
		Rules:    ts.rulesWritten,
		Released: ts.released,
		Free:     int(ts.next-ts.inUse()) * 4,
		Shards:   int(ts.nshards),
		ByBinary: maps.Clone(ts.binBytes),
	}
}

// loadTable places t in the table storage once; path names it in
// TableStats. unwind encodes the entries and rules (and refuses tables
// the BPF search would misread); this only places and writes them. A
// refused table is reported once, then left to frame pointers silently
// (errRefused) until released tables leave room it may fit in (retry).
func (s *Session) loadTable(t *unwind.Table, path string) (tableLoc, error) {
	ts := &s.tables
	id := tableID(t)
	if p, ok := ts.loaded[id]; ok {
		return p.loc, nil
	}
	if r, ok := ts.refused[id]; ok {
		if err := s.reclaim(); err != nil {
			return tableLoc{}, err
		}
		if !ts.retry(r) {
			return tableLoc{}, errRefused
		}
	}
	loc, sp, err := s.placeTable(t)
	if err != nil {
		ts.refused[id] = ts.refusalOf(t, err)
		return tableLoc{}, err
	}
	delete(ts.refused, id)
	p := &placed{loc: loc, span: sp, path: path, bytes: (len(t.Pages) + len(t.Entries)) * 4}
	ts.loaded[id] = p
	if ts.binBytes == nil {
		ts.binBytes = map[string]int{}
	}
	ts.binBytes[path] += p.bytes
	return loc, nil
}

// tableID is what tableStore knows t by: its file version, or the table
// itself when it has none (the vDSO's, tests').
func tableID(t *unwind.Table) any {
	if t.Key != "" {
		return t.Key
	}
	return t
}

// placeTable writes t's rules, page index and entries within the budget:
// in the first range released tables left where it fits (freelist.go),
// else at the storage's end. It returns where t lies and the elements it
// takes.
func (s *Session) placeTable(t *unwind.Table) (tableLoc, span, error) {
	ts := &s.tables
	if _, err := layoutTable(ts.next, t.Pages); err != nil {
		return tableLoc{}, span{}, err // wherever it is placed
	}
	if err := s.reclaim(); err != nil {
		return tableLoc{}, span{}, err
	}
	var l tableLayout // laid out last: where the table goes
	lay := func(start uint64) uint64 {
		l, _ = layoutTable(start, t.Pages)
		return l.end()
	}
	sp, reuse := ts.free.find(uint64(len(t.Pages)+len(t.Entries)), lay)
	if !reuse {
		sp = span{ts.next, lay(ts.next)}
	}
	if sp.end*4 > ts.budget {
		return tableLoc{}, span{}, fmt.Errorf("%w (%s needed, %s of %s in use): unwound without it; raise --unwind-budget",
			errPastBudget, byteSize(sp.len()*4), byteSize(ts.inUse()*4), byteSize(ts.budget))
	}
	entries, err := ts.rules.Entries(t)
	if errors.Is(err, unwind.ErrRuleSetFull) {
		return tableLoc{}, span{}, fmt.Errorf("%w: more than %d distinct unwind rules: unwound without it", wire.ErrTablesFull, maxRules)
	}
	if err != nil {
		return tableLoc{}, span{}, err
	}
	if err := s.writeRules(); err != nil {
		return tableLoc{}, span{}, err
	}
	if err := ts.grow(l.end()); err != nil {
		return tableLoc{}, span{}, err
	}
	if err := ts.write(l.pagesOff, l.pages); err != nil {
		return tableLoc{}, span{}, fmt.Errorf("write unwind pages: %w", err)
	}
	if err := ts.write(l.entriesOff(), l.padEntries(t.Pages, entries)); err != nil {
		return tableLoc{}, span{}, fmt.Errorf("write unwind entries: %w", err)
	}
	loc := tableLoc{pagesOff: uint32(l.pagesOff), npages: uint32(len(t.Pages) - 1), entriesOff: uint32(l.entriesOff())}
	if sp.start < ts.high {
		// Where released tables lay: the walks' caches may hold their
		// rules under these offsets (rules.h: table_tag).
		ts.tags = ts.tags%maxTag + 1
		loc.tag = ts.tags
	}
	if reuse {
		ts.free.take(sp)
	} else {
		ts.next = sp.end
		ts.high = max(ts.high, ts.next)
		ts.pass()
	}
	return loc, sp, nil
}

// maxTag is the largest placement tag (enum mapping_flag). The tables
// placed where released ones lay get the tags 1 to maxTag in turn: two
// of them share a tag only maxTag (16M) such placements apart.
const maxTag = 1<<(32-mappingTagShift) - 1

// inUse is the number of storage elements the tables hold (the padding
// between them included).
func (ts *tableStore) inUse() uint64 {
	free, pending := ts.free.elems()
	return ts.next - free - pending
}

// byteSize prints n bytes for people: 512 bytes, 93.4 KiB, 3.3 MiB.
func byteSize(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// writeRules writes the rules added since the last call.
func (s *Session) writeRules() error {
	ts := &s.tables
	vals := unwind.EncodeRules(ts.rules.Rules[ts.rulesWritten:])
	if err := putRange(s.objs.UnwindRules, uint32(ts.rulesWritten), vals); err != nil {
		return fmt.Errorf("write unwind rules: %w", err)
	}
	ts.rulesWritten = len(ts.rules.Rules)
	return nil
}

// putRange writes vals at consecutive array indexes from off, in batches
// where the kernel supports them.
func putRange[T any](m *ebpf.Map, off uint32, vals []T) error {
	if len(vals) == 0 {
		return nil
	}
	keys := make([]uint32, len(vals))
	for i := range keys {
		keys[i] = off + uint32(i)
	}
	if _, err := m.BatchUpdate(keys, vals, nil); err == nil {
		return nil
	}
	for i := range vals {
		if err := m.Put(keys[i], &vals[i]); err != nil {
			return err
		}
	}
	return nil
}
