package objfile

import (
	"debug/dwarf"
	"errors"
	"slices"
	"sort"
	"sync"

	"github.com/probee/probee/internal/safeelf"
)

// dwarfInfo is the DWARF of one object, parsed lazily: the index of
// compile-unit ranges is built on the first lookup, and each unit's line
// table and inline tree when an address first falls into it. Results are
// cached per address. Safe for concurrent use.
type dwarfInfo struct {
	d     *dwarf.Data
	bytes int64 // its sections' size (dwarfBytes)

	mu    sync.Mutex
	cus   []cuRange // sorted by lo; nil until indexed
	index bool
	units map[dwarf.Offset]*unitInfo
	pcs   map[uint64][]Source
	names map[dwarf.Offset][2]string
}

// cuRange is one address range of a compile unit.
type cuRange struct {
	lo, hi uint64
	cu     dwarf.Offset
}

// maxPCCache bounds the per-object cache of symbolized addresses.
const maxPCCache = 1 << 16

func newDWARFInfo(d *dwarf.Data) *dwarfInfo {
	return &dwarfInfo{d: d, units: map[dwarf.Offset]*unitInfo{},
		pcs: map[uint64][]Source{}, names: map[dwarf.Offset][2]string{}}
}

// openDWARFInfo returns the DWARF of the first of paths that has it
// (openDWARF), or nil when none has (or all are malformed), with the first
// error of a file past a budget (internal/safeelf.ErrBudget), to be said.
func openDWARFInfo(refs []fileRef) (*dwarfInfo, error) {
	var over error
	for _, r := range refs {
		d, n, err := openDWARF(r)
		if d != nil {
			di := newDWARFInfo(d)
			di.bytes = n
			return di, nil
		}
		if over == nil && errors.Is(err, safeelf.ErrBudget) {
			over = err
		}
	}
	return nil, over
}

// lookup returns the source frames of a virtual address, innermost inlined
// call first and the physical function last, or nil when no compile unit
// covers it. Malformed DWARF yields nil, never a panic.
func (di *dwarfInfo) lookup(pc uint64) (out []Source) {
	if di == nil {
		return nil
	}
	di.mu.Lock()
	defer di.mu.Unlock()
	if fs, ok := di.pcs[pc]; ok {
		return fs
	}
	_ = safeelf.Guard("DWARF", func() error { out = di.lookupLocked(pc); return nil })
	if len(di.pcs) >= maxPCCache {
		clear(di.pcs)
	}
	di.pcs[pc] = out
	return out
}

// lookupLocked is lookup without the cache and the panic guard (the fuzz
// target drives it so that bugs here are not hidden).
func (di *dwarfInfo) lookupLocked(pc uint64) []Source {
	if !di.index {
		di.index = true
		di.cus = indexUnits(di.d)
	}
	cu, ok := findUnit(di.cus, pc)
	if !ok {
		return nil
	}
	u := di.units[cu]
	if u == nil {
		u = loadUnit(di.d, cu)
		di.units[cu] = u
	}
	return di.frames(u, pc)
}

// indexUnits lists the address ranges of every compile unit, reading only
// the units' top entries.
func indexUnits(d *dwarf.Data) []cuRange {
	var out []cuRange
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			rs, _ := d.Ranges(e)
			for _, rg := range rs {
				if rg[1] > rg[0] {
					out = append(out, cuRange{rg[0], rg[1], e.Offset})
				}
			}
		}
		r.SkipChildren()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lo != out[j].lo {
			return out[i].lo < out[j].lo
		}
		return out[i].hi > out[j].hi
	})
	return out
}

// findUnit returns the unit whose range holds pc; with overlapping ranges
// (discarded code at address 0) the nearest start wins.
func findUnit(cus []cuRange, pc uint64) (dwarf.Offset, bool) {
	i := sort.Search(len(cus), func(i int) bool { return cus[i].lo > pc })
	for j := i - 1; j >= 0 && j >= i-16; j-- {
		if pc < cus[j].hi {
			return cus[j].cu, true
		}
	}
	return 0, false
}

// unitInfo is what one compile unit contributes: its line table rows and
// its tree of functions and inlined calls.
type unitInfo struct {
	rows     []lineRow  // sorted by address, sequence ends before starts at one address
	rowFiles []string   // the rows' files, by lineRow.file
	files    []string   // file table by index (DW_AT_call_file), full paths
	nodes    []funcNode // subprograms and inlined calls, parents before children
}

// lineRow is one row of a line table in 16 bytes (40 with a string and an
// int each): the parsed units of a binary with full debug info stay
// cached while a run's stacks are symbolized, and rows are most of them
// (libpython3.11's took 33 MB of a system-wide run's 150 MB).
type lineRow struct {
	addr uint64
	file uint32 // index into unitInfo.rowFiles
	line uint32 // the line; rowEnd set on a row that ends a sequence
}

// rowEnd marks a lineRow that ends a sequence; lines past it are clamped.
const rowEnd = 1 << 31

func (r lineRow) end() bool { return r.line&rowEnd != 0 }

// loadUnit reads the unit at off; a malformed unit gives what could be read.
func loadUnit(d *dwarf.Data, off dwarf.Offset) *unitInfo {
	u := &unitInfo{}
	r := d.Reader()
	r.Seek(off)
	cu, err := r.Next()
	if err != nil || cu == nil {
		return u
	}
	u.readLines(d, cu)
	u.nodes = readNodes(d, r, cu)
	return u
}

func (u *unitInfo) readLines(d *dwarf.Data, cu *dwarf.Entry) {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return
	}
	compDir, _ := cu.Val(dwarf.AttrCompDir).(string)
	names := map[*dwarf.LineFile]string{}
	name := func(f *dwarf.LineFile) string {
		if f == nil {
			return ""
		}
		n, ok := names[f]
		if !ok {
			n = cleanPath(fullName(f.Name, compDir))
			names[f] = n
		}
		return n
	}
	index := map[string]uint32{}
	var e dwarf.LineEntry
	for lr.Next(&e) == nil {
		u.rows = append(u.rows, lineRow{addr: e.Address, file: u.rowFile(index, name(e.File)), line: rowLine(e.Line, e.EndSequence)})
	}
	for _, f := range lr.Files() {
		u.files = append(u.files, name(f))
	}
	u.rows = slices.Clip(u.rows)
	sort.SliceStable(u.rows, func(i, j int) bool {
		a, b := u.rows[i], u.rows[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.end() && !b.end()
	})
}

// rowFile is the index of file name in u.rowFiles, added when new.
func (u *unitInfo) rowFile(index map[string]uint32, name string) uint32 {
	i, ok := index[name]
	if !ok {
		i = uint32(len(u.rowFiles))
		index[name] = i
		u.rowFiles = append(u.rowFiles, name)
	}
	return i
}

// rowLine packs a row's line and end-of-sequence flag (lineRow.line).
func rowLine(line int, end bool) uint32 {
	l := uint32(min(max(line, 0), rowEnd-1))
	if end {
		l |= rowEnd
	}
	return l
}

// lineAt returns the file and line of the row covering pc: the last row at
// or below pc, unless that row ends a sequence.
func (u *unitInfo) lineAt(pc uint64) (string, int) {
	i := sort.Search(len(u.rows), func(i int) bool { return u.rows[i].addr > pc }) - 1
	if i < 0 || u.rows[i].end() {
		return "", 0
	}
	r := u.rows[i]
	return u.rowFiles[r.file], int(r.line &^ rowEnd)
}

// file returns entry i of the unit's file table, or "".
func (u *unitInfo) file(i int64) string {
	if i < 0 || i >= int64(len(u.files)) {
		return ""
	}
	return u.files[i]
}
