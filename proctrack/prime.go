package proctrack

import (
	"slices"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
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
func (h *History) Prime(pid int, maps []procmaps.Mapping, comm string) {
	exec := execMappings(maps)
	if !slices.ContainsFunc(exec, procmaps.Mapping.File) {
		return // a kernel thread, or a process exiting
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.procs[pid]
	if p == nil {
		h.procs[pid] = &Image{h: h, maps: exec, open: map[string]*objfile.Object{}, comm: comm, read: true, last: time.Now()}
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
