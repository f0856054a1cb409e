package symbolize

import (
	"sync/atomic"
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// Eviction: what the Symbolizer keeps per file (the objects, their
// symbols and DWARF, the frames of their addresses, the Index's entries)
// is let go once no process it knows maps the file. A long system-wide
// run on a machine that keeps running new code (a build farm; the churn
// benchmark maps a program and a library never seen before every second)
// otherwise holds every file it ever symbolized: the processes that
// mapped them are forgotten once their counts are merged (Forget), but
// their files' frames stayed in the memo (35 MB after 4 minutes) and
// their objects in the Index. A file the final profile still needs is
// mapped by a process not forgotten yet, so it stays; one evicted and
// mapped again later is read again.

// sweepEvery is how often Prune sweeps the per-file caches.
const sweepEvery = 10 * time.Second

// evictions counts the sweeps that let go of frames: a caller keying a
// cache by the frames AppendFrameRefs returns drops it when this changes
// (Evictions).
type evictions struct {
	n     atomic.Uint64
	swept time.Time // under the Symbolizer's mu
}

// Evictions is how many times frames AppendFrameRefs returned were let
// go (their file no longer mapped by a process the Symbolizer knows): a
// cache keyed by those frames should be dropped when it changes, or it
// keeps them.
func (s *Symbolizer) Evictions() uint64 { return s.evicted.n.Load() }

// maybeSweep sweeps when the last sweep is sweepEvery old.
func (s *Symbolizer) maybeSweep(now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.evicted.swept) >= sweepEvery
	if due {
		s.evicted.swept = now
	}
	s.mu.Unlock()
	if due {
		s.sweep()
	}
}

// sweep lets go of the objects of files no known process maps: their
// frames in the memo, their byFile entries, and (once unused at two
// sweeps in a row: an object just read may not be in its set yet) the
// Index's entries; and of the frames of unknown pids. It returns how
// many memo entries it dropped.
func (s *Symbolizer) sweep() int {
	s.mu.Lock()
	keys := map[procmaps.FileKey]bool{}
	objs := map[*objfile.Object]bool{}
	mark := func(p *procMaps) {
		for _, m := range p.maps {
			if m.File() {
				keys[m.FileKey()] = true
			}
		}
		for _, o := range p.open {
			if o != nil {
				objs[o] = true
			}
		}
	}
	for _, p := range s.procs {
		mark(p)
		for _, b := range p.before {
			mark(b)
		}
	}
	// byFile serves processes whose file no path opens any more (preload):
	// kept while a known mapping has the file's identity.
	for k, o := range s.byFile {
		if keys[k] {
			objs[o] = true
		} else {
			delete(s.byFile, k)
		}
	}
	n := 0
	if om := s.objMemo; om != nil {
		for at := range om.frames {
			if !objs[at.o] {
				delete(om.frames, at)
				n++
			}
		}
	}
	// The frames of pids unknown and gone (bare addresses, as many as
	// such processes ran) are kept until the next sweep.
	if m := s.unknown.memo; m != nil {
		n += len(m.frames)
		s.unknown.memo = nil
	}
	ids := map[fileid.ID]bool{}
	for o := range objs {
		ids[o.ID()] = true
	}
	s.mu.Unlock()
	if n > 0 {
		s.evicted.n.Add(1)
	}
	s.idx.Sweep(ids)
	return n
}
