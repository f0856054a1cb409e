package symbolize

import (
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
	"slices"
	"time"
)

// Prime records the mappings of a process that ran before probee started,
// read from /proc at the start of a system-wide run (comm as
// procmaps.ReadProcess gives it), as perf synthesizes its records of the
// processes it finds running. Their objects are read when a stack needs
// them, and the process is not marked seen: one that never produces an
// event is pruned once it is gone. One that does is named even when its
// first event comes as it exits (its maps are empty by the time the
// notice is handled), and the children it forks start with its mappings
// (Fork). What is known of pid already is newer and wins: a snapshot, the
// records of an exec; mappings recorded since the start are kept where
// they overlap.
func (s *Symbolizer) Prime(pid int, maps []procmaps.Mapping, comm string) {
	exec := execMappings(maps)
	if !slices.ContainsFunc(exec, procmaps.Mapping.File) {
		return // a kernel thread, or a process exiting
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[pid]
	if p == nil {
		s.procs[pid] = &procMaps{maps: exec, open: map[string]*objfile.Object{}, comm: comm, read: true, last: time.Now()}
		return
	}
	if p.read || p.recorded {
		return
	}
	p.addMissing(exec)
	if p.comm == "" {
		p.comm = comm
	}
	p.read = true
}

// overlaps reports whether any of p's mappings overlaps m.
func (p *procMaps) overlaps(m procmaps.Mapping) bool {
	return slices.ContainsFunc(p.maps, func(o procmaps.Mapping) bool { return o.Start < m.End && m.Start < o.End })
}
