package symbolize

import (
	"cmp"
	"iter"
	"slices"

	"github.com/probee/probee/internal/fileid"
)

// Stack is one stack to symbolize: user addresses of pid, as Frames takes
// them, counted under comm.
type Stack struct {
	PID  int
	Comm string
	PCs  []uint64
}

// Prefetch symbolizes the addresses in ELF files of stacks into the memo
// AppendFrameRefs reads, one object at a time, and lets go of each
// object's DWARF once its addresses are done. Symbolized stack after
// stack, the stacks of a run kept the DWARF of every object they pass
// through until the end: parsed units, line tables and debug/dwarf's
// abbreviation tables, ~70 MB of a 128 MB peak after 20 s system-wide
// with pyenv's libpython (full debug info) and probee's own binary. Its
// callers then symbolize the same stacks with AppendFrameRefs; an address
// Prefetch did not see reads its object's DWARF again. An object needed
// call after call (libc, on a long run's folds) keeps its DWARF within a
// budget (hotDWARF).
func (s *Symbolizer) Prefetch(stacks iter.Seq[Stack]) {
	s.hot.begin()
	places := map[objectPlace]struct{}{}
	for st := range stacks {
		g := s.hist.ImageOf(st.PID, st.Comm, st.PCs)
		if g == nil {
			continue
		}
		s.mu.Lock()
		s.maybeSweep()
		noInline := s.dw.inlineOff()
		pm, om := s.frameMemo(g, noInline), s.objectMemo(noInline)
		for _, a := range st.PCs {
			if _, seen := pm.frames[a]; seen {
				continue
			}
			pm.frames[a] = nil // seen; AppendFrameRefs fills it in
			if at, ok := placeOf(g, a); ok {
				if _, done := om.frames[at]; !done {
					places[at] = struct{}{}
				}
			}
		}
		s.mu.Unlock()
	}
	// Objects read from one file share their DWARF (objfile.Index): one
	// group each.
	groups := map[fileid.ID][]objectPlace{}
	for at := range places {
		groups[at.o.ID()] = append(groups[at.o.ID()], at)
	}
	clear(places)
	for _, g := range groups {
		slices.SortFunc(g, func(a, b objectPlace) int { return cmp.Compare(a.va, b.va) })
		s.mu.Lock()
		om := s.objectMemo(s.dw.inlineOff())
		for _, at := range g {
			if _, done := om.frames[at]; !done {
				om.frames[at] = s.placeFrames(at)
			}
		}
		s.mu.Unlock()
		s.hot.done(g[0].o) // lets go of its DWARF unless it is in use fold after fold
	}
}
