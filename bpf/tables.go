package bpf

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/unwind"
)

// Sizes of the shared unwind table maps (elements); see doc.go.
const (
	defaultTableEntries = 1 << 20 // 4 MiB: about 40 libcs
	defaultTablePages   = 1 << 16
	maxRules            = 1 << 14
	maxMappings         = 256 // MAX_MAPPINGS in probee.h
)

// tableLoc is where one binary's table lives in the shared maps.
type tableLoc struct {
	pagesOff, npages, entriesOff uint32
}

// tableStore appends tables to the shared arrays once per table (tables
// come from unwind.Cache, shared by file identity) and interns their rules.
type tableStore struct {
	rules        *unwind.RuleSet
	rulesWritten int
	loaded       map[*unwind.Table]tableLoc
	binBytes     map[string]int // path of the first module of each table -> bytes
	nextEntry    uint32
	nextPage     uint32
	entriesCap   uint32
	pagesCap     uint32
}

// newTableStore returns an empty store sized after spec's table maps.
func newTableStore(spec *ebpf.CollectionSpec) tableStore {
	return tableStore{rules: unwind.NewRuleSet(maxRules), loaded: map[*unwind.Table]tableLoc{},
		entriesCap: spec.Maps["unwind_entries"].MaxEntries, pagesCap: spec.Maps["unwind_pages"].MaxEntries}
}

// TableStats describes the unwind tables loaded into the kernel.
type TableStats struct {
	Tables int // distinct binaries
	Bytes  int // bytes of table data written (pages, entries, rules)
	Rules  int
	// ByBinary is each table's own bytes (pages and entries; the rules
	// are shared), by the path of the first mapping it was loaded for.
	ByBinary map[string]int
}

// ErrTablesFull means the shared table maps have no room for another binary.
var ErrTablesFull = errors.New("unwind table maps are full: the binary is unwound with frame pointers")

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
	for _, m := range mods {
		if int(info.N) == maxMappings {
			errs = append(errs, fmt.Errorf("pid %d has more than %d executable mappings: the rest are not unwound", pid, maxMappings))
			break
		}
		um, err := s.moduleMapping(m)
		if err != nil {
			errs = append(errs, err)
		}
		info.Maps[info.N] = um
		info.N++
	}
	if err := s.objs.ProcMaps.Put(uint32(pid), &info); err != nil {
		errs = append(errs, fmt.Errorf("write unwind mappings of pid %d: %w", pid, err))
	}
	return errors.Join(errs...)
}

// TableStats reports what SetProcessModules loaded so far.
func (s *Session) TableStats() TableStats {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	ts := &s.tables
	return TableStats{
		Tables:   len(ts.loaded),
		Bytes:    int(ts.nextEntry)*unwind.EntrySize + int(ts.nextPage)*unwind.PageSize + ts.rulesWritten*unwind.RuleSize,
		Rules:    ts.rulesWritten,
		ByBinary: maps.Clone(ts.binBytes),
	}
}

// loadTable appends t to the shared maps once; path names it in TableStats.
// unwind encodes the entries and rules (and refuses tables the BPF search
// would misread); this only places and writes them.
func (s *Session) loadTable(t *unwind.Table, path string) (tableLoc, error) {
	ts := &s.tables
	if loc, ok := ts.loaded[t]; ok {
		return loc, nil
	}
	np, ne := len(t.Pages), len(t.Entries)
	if uint64(ts.nextPage)+uint64(np) > uint64(ts.pagesCap) || uint64(ts.nextEntry)+uint64(ne) > uint64(ts.entriesCap) {
		return tableLoc{}, ErrTablesFull
	}
	entries, err := ts.rules.Entries(t)
	if errors.Is(err, unwind.ErrRuleSetFull) {
		return tableLoc{}, fmt.Errorf("more than %d distinct unwind rules: %w", maxRules, ErrTablesFull)
	}
	if err != nil {
		return tableLoc{}, err
	}
	if err := s.writeRules(); err != nil {
		return tableLoc{}, err
	}
	loc := tableLoc{pagesOff: ts.nextPage, npages: uint32(np - 1), entriesOff: ts.nextEntry}
	if err := putRange(s.objs.UnwindPages, loc.pagesOff, t.Pages); err != nil {
		return tableLoc{}, fmt.Errorf("write unwind pages: %w", err)
	}
	if err := putRange(s.objs.UnwindEntries, loc.entriesOff, entries); err != nil {
		return tableLoc{}, fmt.Errorf("write unwind entries: %w", err)
	}
	ts.nextPage += uint32(np)
	ts.nextEntry += uint32(ne)
	ts.loaded[t] = loc
	if ts.binBytes == nil {
		ts.binBytes = map[string]int{}
	}
	ts.binBytes[path] += ne*unwind.EntrySize + np*unwind.PageSize
	return loc, nil
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
