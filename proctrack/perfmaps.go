package proctrack

import (
	"time"

	"github.com/probee/probee/internal/perfmap"
	"github.com/probee/probee/objfile"
)

// A process's perf map (internal/perfmap: the names a JIT gives its code)
// is opened when the process is first snapshotted, kept with the image it
// runs, read again at an exec record and when a stack has an address no
// file maps and the map does not name yet, read a last time and closed
// once the process is gone (Prune), and released when it is forgotten.

// perfMapOf returns pid's perf map: the one known (read again for what was
// appended since), else a new one read now.
func (h *History) perfMapOf(pid int) *perfmap.Map {
	h.mu.Lock()
	var m *perfmap.Map
	if p := h.procs[pid]; p != nil {
		m = p.jit
	}
	h.mu.Unlock()
	if m != nil {
		m.Refresh()
		return m
	}
	return h.perf.Open(pid)
}

// refreshPerfMap reads what was appended to p's perf map when one of
// addrs should be named by it (no file maps it) and is not yet.
func (h *History) refreshPerfMap(p *Image, addrs []uint64) {
	h.mu.Lock()
	m, miss := p.jit, false
	if m.Ended() {
		h.mu.Unlock()
		return // nothing more will be read
	}
	last := -1
	for _, a := range addrs {
		if m == nil || miss {
			break
		}
		if last = p.indexNear(last, a); last < 0 || !p.maps[last].File() {
			_, found := m.Lookup(a)
			miss = !found
		}
	}
	h.mu.Unlock()
	if miss {
		m.Refresh()
	}
}

// PerfMapsHeld is how many processes' perf maps are kept open.
func (h *History) PerfMapsHeld() int { return h.perf.Held() }

// rereadJIT gives pid's current set the perf map as it is after the exec
// that retired p (see ExecReset).
func (h *History) rereadPerfMap(pid int, p *Image, comm string) {
	m := h.perf.Open(pid)
	if m == nil {
		m = p.jit
	} else {
		p.jit.Release()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.procs[pid]
	if q == nil {
		q = &Image{h: h, open: map[string]*objfile.Object{}, seen: p.seen, last: time.Now(), before: p.before, comm: comm}
		h.procs[pid] = q
	}
	if q.jit == nil {
		q.jit = m
		q.changed()
	} else {
		m.Release()
	}
}

// closeExitedPerfMaps reads and closes the perf maps of processes that exited.
func (h *History) closeExitedPerfMaps(alive func(pid int) bool) {
	type held struct {
		pid int
		m   *perfmap.Map
	}
	var hs []held
	h.mu.Lock()
	for pid, p := range h.procs {
		if p.jit.Holding() {
			hs = append(hs, held{pid, p.jit})
		}
	}
	h.mu.Unlock()
	for _, c := range hs {
		if !alive(c.pid) {
			c.m.Refresh()
		}
	}
}
