package proctrack

import (
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// Prune forgets the mappings recorded for processes that never produced an
// event (never snapshotted) and no longer run, once their last record is
// older than grace (by then the notice of an event, if there was one, has
// been handled). The kernel reports the mappings of every process on the
// machine; kept, they would grow without bound on long runs on busy
// machines. alive reports whether a pid still runs. It returns how many
// processes were forgotten. The perf maps of snapshotted processes that
// exited get their last read and are closed: the files kept open are
// those of running processes. Every sweepEvery, it lets go of the
// per-file caches of files no process it knows maps (sweep).
//
// A process given the pid of one that produced an event (announced) may
// not be announced itself: the kernel announces a tgid again only once
// the old task is freed, and events before then find it announced. Its counts,
// if any, are merged and the process forgotten (Forget) once it has been
// gone a while; Prune forgets it only once it has been gone reusedGrace
// times grace, after the merge would have. Pruned earlier, its stacks
// lost every name: a system-wide run with 350 new processes a second
// wraps a pid_max of 32768 every ~90 s, and 70% of the stacks of a
// 4-minute run came out as bare addresses (226K distinct frames).
func (h *History) Prune(grace time.Duration, alive func(pid int) bool) int {
	h.closeExitedPerfMaps(alive)
	now := time.Now()
	cutoff := now.Add(-grace)
	var stale []int
	h.mu.Lock()
	for pid, p := range h.procs {
		if !p.seen && p.last.Before(cutoff) {
			stale = append(stale, pid)
		}
	}
	h.mu.Unlock()
	n := 0
	for _, pid := range stale {
		if alive(pid) {
			continue
		}
		h.mu.Lock()
		if p := h.procs[pid]; p != nil && !p.seen && p.last.Before(cutoff) && h.goneLongEnough(pid, p, now, grace) {
			delete(h.procs, pid)
			p.jit.Release()
			n++
		}
		h.mu.Unlock()
	}
	h.maybeSweep(now)
	return n
}

// reusedGrace is how many graces a process on a reused pid stays once
// gone (see Prune): the merge of a gone process's counts waits 10 s and
// two drains (bpf.Session.TakeGone).
const reusedGrace = 3

// goneLongEnough reports whether Prune may forget p, gone: at once unless
// its pid was announced before, else once it has been gone reusedGrace
// times grace (the first call notes when it was found gone). Call with
// h.mu held.
func (h *History) goneLongEnough(pid int, p *Image, now time.Time, grace time.Duration) bool {
	if !h.announced[pid] {
		return true
	}
	if p.gone.IsZero() {
		p.gone = now
	}
	return now.Sub(p.gone) >= reusedGrace*grace
}

// Eviction: what is kept per file (the objects, their symbols and DWARF,
// the Index's entries, and the symbolizer's frames of their addresses) is
// let go once no process the History knows maps the file. A long
// system-wide run on a machine that keeps running new code (a build farm;
// the churn benchmark maps a program and a library never seen before
// every second) otherwise holds every file it ever symbolized: the
// processes that mapped them are forgotten once their counts are merged
// (Forget), but their objects stayed in the Index. A file the final
// profile still needs is mapped by a process not forgotten yet, so it
// stays; one evicted and mapped again later is read again.

// sweepEvery is how often Prune sweeps the per-file caches.
const sweepEvery = 10 * time.Second

// sweep is what the last sweep kept (under the History's mu): a cache of
// frames drawn from the History's images lets go of the rest (Swept).
type sweep struct {
	n      uint64                   // sweeps so far
	at     time.Time                // when the last one ran
	objs   map[*objfile.Object]bool // the objects in use then
	images map[*Image]bool          // the images known then
}

// maybeSweep sweeps when the last sweep is sweepEvery old.
func (h *History) maybeSweep(now time.Time) {
	h.mu.Lock()
	due := now.Sub(h.swept.at) >= sweepEvery
	if due {
		h.swept.at = now
	}
	h.mu.Unlock()
	if due {
		h.sweep()
	}
}

// sweep lets go of the objects of files no known process maps: their
// byFile entries and (once unused at two sweeps in a row: an object just
// read may not be in its set yet) the Index's entries. It keeps the
// objects in use and the images known, for Swept.
func (h *History) sweep() {
	h.mu.Lock()
	keys := map[procmaps.FileKey]bool{}
	objs := map[*objfile.Object]bool{}
	images := map[*Image]bool{}
	mark := func(p *Image) {
		images[p] = true
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
	for _, p := range h.procs {
		mark(p)
		for _, b := range p.before {
			mark(b)
		}
	}
	// byFile serves processes whose file no path opens any more (preload):
	// kept while a known mapping has the file's identity.
	for k, o := range h.byFile {
		if keys[k] {
			objs[o] = true
		} else {
			delete(h.byFile, k)
		}
	}
	ids := map[fileid.ID]bool{}
	for o := range objs {
		ids[o.ID()] = true
	}
	h.swept.objs, h.swept.images = objs, images
	h.swept.n++
	h.mu.Unlock()
	h.idx.Sweep(ids)
}

// Swept says what the last sweep of the per-file caches kept: how many
// sweeps ran (n changes at each), the objects still in use and the images
// still known then. A cache of frames drawn from the History's images
// (the symbolizer's) lets go of the rest when n changed.
func (h *History) Swept() (n uint64, objects map[*objfile.Object]bool, images map[*Image]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.swept.n, h.swept.objs, h.swept.images
}
