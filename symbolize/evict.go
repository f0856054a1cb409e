package symbolize

import (
	"sync/atomic"

	"github.com/probee/probee/objfile"
	"github.com/probee/probee/proctrack"
)

// Eviction: the frames of files no process maps any more are let go. The
// processes' mapping history (proctrack.History) sweeps what it keeps per
// file every 10 s, once processes were pruned or forgotten (their counts
// merged); after each of its sweeps, the Symbolizer's next use lets go of
// the frames of the objects no longer in use (35 MB after 4 minutes of the
// churn benchmark otherwise), the memos of images no longer known, and
// the frames of unknown pids. A file the final profile still needs is
// mapped by a process not forgotten yet, so its frames stay.

// evictions counts the sweeps that let go of frames: a caller keying a
// cache by the frames AppendFrameRefs returns drops it when this changes
// (Evictions).
type evictions struct {
	n     atomic.Uint64
	swept uint64 // the History's sweeps when the memos were last swept
}

// Evictions is how many times frames AppendFrameRefs returned were let
// go (their file no longer mapped by a process the History knows): a
// cache keyed by those frames should be dropped when it changes, or it
// keeps them.
func (s *Symbolizer) Evictions() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maybeSweep()
	return s.evicted.n.Load()
}

// maybeSweep sweeps the memos when the History swept since they last
// were. Call with s.mu held.
func (s *Symbolizer) maybeSweep() {
	n, objs, images := s.hist.Swept()
	if n == s.evicted.swept {
		return
	}
	s.evicted.swept = n
	if s.sweep(objs, images) > 0 {
		s.evicted.n.Add(1)
	}
}

// sweep lets go of the frames of objects not in objs, of the memos of
// images not in images, and of the frames of unknown pids. It returns how
// many memo entries of frames it dropped. Call with s.mu held.
func (s *Symbolizer) sweep(objs map[*objfile.Object]bool, images map[*proctrack.Image]bool) int {
	n := 0
	if om := s.objMemo; om != nil {
		for at := range om.frames {
			if !objs[at.o] {
				delete(om.frames, at)
				n++
			}
		}
	}
	for g := range s.memos {
		if !images[g] {
			delete(s.memos, g)
		}
	}
	// The frames of pids unknown and gone (bare addresses, as many as
	// such processes ran) are kept until the next sweep.
	if m := s.unknown; m != nil {
		n += len(m.frames)
		s.unknown = nil
	}
	return n
}
