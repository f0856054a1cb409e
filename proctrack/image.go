package proctrack

import (
	"slices"
	"sort"
	"time"

	"github.com/probee/probee/internal/perfmap"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// Image is one mapping set of a process: the executable mappings of an
// image it ran (from its fork or an exec to its next exec), the objects
// of the files they map, read while the process lived, and, for the image
// it runs now, its perf map. Package symbolize names a stack's addresses
// from the Image that ran it (History.ImageOf). Its methods are safe for
// concurrent use with the History's.
type Image struct {
	h      *History
	maps   []procmaps.Mapping         // executable mappings, sorted by Start
	open   map[string]*objfile.Object // mapping path -> loaded object (nil: unreadable)
	seen   bool                       // snapshotted: the process produced an event
	read   bool                       // a /proc read gave the set (whole as of then)
	last   time.Time                  // when AddMapping last recorded a mapping
	readAt uint64                     // CLOCK_MONOTONIC ns when /proc was last read for the set (0: never)
	gone   time.Time                  // when Prune first found the process gone (reused pids only)
	jit    *perfmap.Map               // its perf map, from the first snapshot on (nil: process gone by then)
	comm   string                     // the process's comm while these were its mappings ("" unknown)
	parent int                        // the tgid it was forked from, when known (see setFor)
	// recorded: the set is built from the kernel's records alone since the
	// process's fork or last exec, in their order (generations.go)
	recorded bool
	before   []*Image // its mapping sets before its execs, oldest first (generations.go)
	// version changes whenever the set, its objects or its perf map do:
	// what a cache of names drawn from the set checks (changed).
	version uint64
	// loaded: every file mapping has had its object loaded (or tried);
	// set by loadMissing, cleared by insert.
	loaded bool
	// shared: maps and open are another set's too (Fork), copied before
	// they change (own). A forked child most often execs at once, and its
	// copy of the parent's set, kept as its set before the exec, never
	// changes: a system-wide run kept one copy per exec'd process.
	shared bool
}

// At returns the executable mapping of g holding addr and the object of
// the file it maps (nil: none, or the file could not be read); ok is
// false when no mapping holds addr.
func (g *Image) At(addr uint64) (m procmaps.Mapping, o *objfile.Object, ok bool) {
	g.h.mu.Lock()
	defer g.h.mu.Unlock()
	if m, ok = g.mappingAt(addr); ok && m.File() {
		o = g.open[m.Path]
	}
	return m, o, ok
}

// PerfMap returns the perf map of g's process when g is the image it runs
// (nil for an earlier image, or a process without one).
func (g *Image) PerfMap() *perfmap.Map {
	g.h.mu.Lock()
	defer g.h.mu.Unlock()
	return g.jit
}

// Version changes whenever g's mappings, their objects or its perf map
// change (not when the perf map grows: perfmap.Map.Lines does).
func (g *Image) Version() uint64 {
	g.h.mu.Lock()
	defer g.h.mu.Unlock()
	return g.version
}

// changed notes a change of p's mappings, objects or perf map.
func (p *Image) changed() { p.version++ }

// mappingAt returns the executable mapping holding addr.
func (p *Image) mappingAt(addr uint64) (procmaps.Mapping, bool) {
	if i := p.indexNear(-1, addr); i >= 0 {
		return p.maps[i], true
	}
	return procmaps.Mapping{}, false
}

// indexNear is the index in p.maps of the mapping holding addr (-1 for
// none), found at last (the index of the address before, or -1) when it
// holds addr: a stack's addresses come in runs within one mapping.
func (p *Image) indexNear(last int, addr uint64) int {
	if last >= 0 && addr >= p.maps[last].Start && addr < p.maps[last].End {
		return last
	}
	i := sort.Search(len(p.maps), func(i int) bool { return p.maps[i].End > addr })
	if i == len(p.maps) || addr < p.maps[i].Start {
		return -1
	}
	return i
}

// hasFile reports whether a file mapping is known of the process.
func (p *Image) hasFile() bool {
	return p != nil && slices.ContainsFunc(p.maps, procmaps.Mapping.File)
}

// insert adds m, dropping older mappings it overlaps (MAP_FIXED remaps).
func (p *Image) insert(m procmaps.Mapping) {
	p.own()
	kept := p.maps[:0]
	for _, old := range p.maps {
		if old.End <= m.Start || old.Start >= m.End {
			kept = append(kept, old)
		}
	}
	p.changed()
	p.loaded = false
	i := sort.Search(len(kept), func(i int) bool { return kept[i].Start >= m.Start })
	kept = append(kept, procmaps.Mapping{})
	copy(kept[i+1:], kept[i:])
	kept[i] = m
	p.maps = kept
}

// addMissing adds the mappings of maps (a /proc read) that overlap none
// of p's.
func (p *Image) addMissing(maps []procmaps.Mapping) {
	for _, m := range maps {
		if !p.overlaps(m) {
			p.insert(m)
		}
	}
}

// overlaps reports whether any of p's mappings overlaps m.
func (p *Image) overlaps(m procmaps.Mapping) bool {
	return slices.ContainsFunc(p.maps, func(o procmaps.Mapping) bool { return o.Start < m.End && m.Start < o.End })
}

// execMappings is the executable mappings of maps, sorted by start.
func execMappings(maps []procmaps.Mapping) []procmaps.Mapping {
	var exec []procmaps.Mapping
	for _, m := range maps {
		if m.Exec() {
			exec = append(exec, m)
		}
	}
	sort.Slice(exec, func(i, j int) bool { return exec[i].Start < exec[j].Start })
	return exec
}
