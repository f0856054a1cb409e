package objfile

import (
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/gopclntab"
)

// Addresses to source lines and inlined calls: where an object or its
// separate debug file has .debug_info and .debug_line, an address gets the
// file and line of each inlined call there (DW_TAG_inlined_subroutine) and
// of the function holding it (dwarfsym.go, inline.go); a Go binary without
// DWARF gets the same from .gopclntab (gosource.go). debug/dwarf has no
// inline-aware address lookup, hence this one.

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
// a release (ReleaseDWARF); for a Go binary without DWARF, its .gopclntab
// (gosource.go) instead.
type lazyDWARF struct {
	mu   sync.Mutex
	read bool
	info *dwarfInfo
	gtab *gopclntab.Table
	err  error // why it was not read (a budget), until said
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
			l.gtab, _ = fileid.Bounded(o.Path, func() (*gopclntab.Table, error) { return openGoTable(o.files()[0]), nil })
		}
		l.read = true
	}
	return l.info, l.gtab
}

// SourceAt returns what the source says of the virtual address va:
// innermost inlined call first, the physical function last; from o's
// DWARF, else from a Go binary's .gopclntab; nil when neither covers it.
// The DWARF is read on first use and kept with o (and the copies an Index
// makes of it); results are cached per address.
func (o *Object) SourceAt(va uint64) []Source {
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

// HoldsDWARF reports whether o's DWARF (or .gopclntab) is read and kept,
// until ReleaseDWARF.
func (o *Object) HoldsDWARF() bool {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read
}

// ReleaseDWARF lets go of o's DWARF; the next use reads it again.
func (o *Object) ReleaseDWARF() {
	l := o.dwarf
	l.mu.Lock()
	l.info, l.gtab, l.read = nil, nil, false
	l.mu.Unlock()
}
