package objfile

import (
	"sync"
	"sync/atomic"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/gopclntab"
)

// Addresses to source lines and inlined calls: where an object or its
// separate debug file has .debug_info and .debug_line, an address gets the
// file and line of each inlined call there (DW_TAG_inlined_subroutine) and
// of the function holding it (dwarfsym.go, inline.go); a Go binary gets
// the same from its .gopclntab (gosource.go), DWARF being its fallback.
// debug/dwarf has no inline-aware address lookup, hence this one.

// Source is what the source says of an address: one inlined call there,
// or the physical function holding it, with the file and line executing
// in it ("" and 0 when the line table does not cover the address).
type Source struct {
	Name   string // DWARF name (demangled); "" when unknown
	Symbol string // raw DWARF name (linkage name when present)
	File   string
	Line   int
	Inline bool
}

// lazyDWARF is an object's DWARF, read when first needed, and again after
// a release (ReleaseDWARF); for a Go binary, its .gopclntab (gosource.go):
// read first, and kept across releases when it gives inlined calls;
// else, where the binary has no DWARF, read and released in its place.
type lazyDWARF struct {
	mu   sync.Mutex
	read bool // info (and gtab) read, until a release
	info *dwarfInfo
	gtab *gopclntab.Table // a Go binary's table, in place of missing DWARF
	err  error            // why it was not read (a budget), until said

	// A Go binary's .gopclntab, looked at once: kept when it gives
	// inlined calls (gopclntab.Table.Inlines), and then it serves before
	// DWARF and ReleaseDWARF keeps it. Each release of the DWARF of a
	// long-lived Go program (dockerd, containerd, kubelet) made the next
	// fold of a system-wide run parse it again: 32% of the allocations of
	// a 5-minute run went to debug/dwarf. What a release saves is a
	// parsed tree that grows with the lookups (units, line rows,
	// abbreviations, per-address results: ~70 MB held after 20 s
	// system-wide with a libpython and probee's own binary,
	// symbolize/prefetch.go). The table is the bytes of one section (4 MB
	// of probee's 19 MB binary; before Go 1.26, the functions' data from
	// go:func.* on too) and the entries of the ABI0 names: read once,
	// fixed in size, nothing added by lookups. Read again after each
	// release, all of it would be allocated again per fold. It goes with its object,
	// when the Index drops that (Index.Sweep), and all the tables kept
	// stay within MaxGoTables. A table without inline
	// trees is not kept: before Go 1.20, debug/gosym parses every
	// function up front (gtab, released with the DWARF it stands in for).
	goRead bool
	goTab  *gopclntab.Table
}

// goFirst returns o's .gopclntab when o is a Go binary whose table gives
// inlined calls, which then serves before DWARF; nil otherwise. The table
// is read on first use and kept until the object goes (not released with
// the DWARF).
func (o *Object) goFirst() *gopclntab.Table {
	if !o.Go {
		return nil
	}
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.goRead {
		t, _ := fileid.Bounded(o.Path, func() (*gopclntab.Table, error) { return openGoTable(o.files()[0]), nil })
		if t != nil && t.Inlines() && keepGoTable(t.Bytes()) {
			l.goTab = t
		}
		l.goRead = true
	}
	return l.goTab
}

// MaxGoTables bounds the bytes of the .gopclntab tables kept across
// releases (goFirst), all objects together: each may be up to
// safeelf.MaxSection, and a machine may map many Go binaries (or files
// made to look like them). Past it a Go binary's table is not kept, and
// its sources come from DWARF, read and released, or from its table read
// and released in DWARF's place, as before tables were kept.
var MaxGoTables int64 = 256 << 20

// goTablesKept is the bytes of the tables kept, against MaxGoTables.
var goTablesKept atomic.Int64

// keepGoTable reports whether a table of n bytes fits in MaxGoTables, and
// counts it when it does.
func keepGoTable(n int) bool {
	for {
		kept := goTablesKept.Load()
		if kept+int64(n) > MaxGoTables {
			return false
		}
		if goTablesKept.CompareAndSwap(kept, kept+int64(n)) {
			return true
		}
	}
}

// dropGoTable lets go of o's kept table and gives its bytes back to
// MaxGoTables (Index.Sweep, when o goes); a later use reads it again.
func (o *Object) dropGoTable() {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.goTab != nil {
		goTablesKept.Add(-int64(l.goTab.Bytes()))
	}
	l.goTab, l.goRead = nil, false
}

// sources returns o's DWARF, reading it on first use; nil when o has none
// (neither in the file nor in its separate debug file). A Go binary
// without DWARF gets its .gopclntab instead (nil DWARF, non-nil table).
func (o *Object) sources() (*dwarfInfo, *gopclntab.Table) {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.read {
		// Within the file's time budget: what is not read by then is not
		// waited for again (the lock is held while reading).
		l.info, l.err = fileid.Bounded(o.Path, func() (*dwarfInfo, error) { return openDWARFInfo(o.files()) })
		if l.info == nil && o.Go {
			l.gtab = l.goTab
			if l.gtab == nil {
				l.gtab, _ = fileid.Bounded(o.Path, func() (*gopclntab.Table, error) { return openGoTable(o.files()[0]), nil })
			}
		}
		l.read = true
	}
	return l.info, l.gtab
}

// SourceAt returns what the source says of the virtual address va:
// innermost inlined call first, the physical function last; nil when
// nothing covers it. A Go binary whose .gopclntab gives inlined calls
// takes them from it (gosource.go), DWARF or not: its DWARF is read only
// for the addresses the table does not cover (the C code of a cgo
// binary). Any other object takes them from its DWARF, else, for a Go
// binary without DWARF, from its table (without inlined calls). The DWARF
// is read on first use and kept with o (and the copies an Index makes of
// it) until ReleaseDWARF; its results are cached per address.
func (o *Object) SourceAt(va uint64) []Source {
	if t := o.goFirst(); t != nil {
		if src := goSources(t, va); len(src) > 0 {
			return src
		}
	}
	info, gtab := o.sources()
	if info != nil {
		return info.lookup(va)
	}
	return goSources(gtab, va)
}

// DWARFWarning returns, once, why o's DWARF was not read (a budget:
// internal/safeelf.ErrBudget, or the file's time budget), nil otherwise.
func (o *Object) DWARFWarning() error {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	l.err = nil
	return err
}

// HoldsDWARF reports whether o's DWARF (or the .gopclntab standing in for
// missing DWARF) is read and kept, until ReleaseDWARF. A Go table that
// serves before DWARF (SourceAt) is kept across releases and not counted.
func (o *Object) HoldsDWARF() bool {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read
}

// DWARFBytes is the size of the DWARF sections o holds read (0 when it
// holds none): what keeping them across releases costs, before what the
// lookups add.
func (o *Object) DWARFBytes() int64 {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.info == nil {
		return 0
	}
	return l.info.bytes
}

// ReleaseDWARF lets go of o's DWARF; the next use reads it again. A Go
// binary's .gopclntab that serves before DWARF is kept (lazyDWARF.goTab).
func (o *Object) ReleaseDWARF() {
	l := o.dwarf
	l.mu.Lock()
	l.info, l.gtab, l.read = nil, nil, false
	l.mu.Unlock()
}
