package proctrack

import (
	"maps"
	"slices"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// AddMapping records one executable mapping of pid as the kernel reported
// it when it was created (bpf.MmapWatcher). Processes that exit before
// Snapshot can read /proc/PID/maps are symbolized from these. The
// mapping's ELF object is loaded lazily, when ImageOf first needs it,
// unless its path does not name the file on the host (see preload). The
// kernel's name of anonymous memory, "//anon", becomes "" as in
// /proc/PID/maps (it is no file).
func (h *History) AddMapping(pid int, m procmaps.Mapping) {
	if m.Path == perfAnon {
		m.Path = ""
	}
	h.mu.Lock()
	p := h.procs[pid]
	if p == nil {
		p = &Image{h: h, open: map[string]*objfile.Object{}}
		h.procs[pid] = p
	}
	p.insert(m)
	p.last = time.Now()
	_, known := h.byFile[m.FileKey()]
	h.mu.Unlock()
	if m.File() && !known {
		h.preload(pid, m)
	}
}

// perfAnon is the path perf's MMAP records give anonymous memory.
const perfAnon = "//anon"

// Inherit gives child the mappings known of parent when no file mapping is
// known of child itself: a forked child that has not exec'd maps what its
// parent did, and one that exited before its /proc/PID/maps could be read
// (or showed none, exiting) is symbolized from them. What is recorded of
// child itself (its [uprobes] page, an exec's mappings) wins where they
// overlap.
//
// A child known with file mappings of its own (read after it exec'd) gets
// the parent's set as the one it had before its exec, for its samples
// taken under the parent's comm until then (generations.go).
func (h *History) Inherit(child, parent int) {
	h.mu.Lock()
	c := h.procs[child]
	h.mu.Unlock()
	if c != nil && c.recorded {
		return // its fork record made it (Fork)
	}
	if c.hasFile() && c.comm == "" {
		return // no comm to tell its sets apart by
	}
	_ = h.Snapshot(parent) // fresh: the parent may have exec'd since it was seen
	h.mu.Lock()
	defer h.mu.Unlock()
	p, c := h.procs[parent], h.procs[child]
	if p == nil {
		return
	}
	q := &Image{h: h, maps: slices.Clone(p.maps), open: maps.Clone(p.open), seen: true, read: true, comm: p.comm, parent: parent}
	if c.hasFile() {
		c.parent = parent
		if c.comm != p.comm {
			c.addBefore(q)
		}
		return
	}
	if c != nil {
		for _, m := range c.maps {
			q.insert(m)
		}
		q.jit = c.jit // its own perf map: the file is named after the child's pid
		q.before = c.before
	}
	h.procs[child] = q
}

// Fork starts child's mappings as a copy of parent's current set: the
// kernel's fork record, handled in order with the mapping and exec
// records, so the copy is the parent's image at the fork, and the
// records that follow build the child's next ones (ExecReset,
// AddMapping). What /proc reads and Inherit made of child is replaced
// (they may have met it in the middle of an exec), but for its perf map.
// A parent not known whole (neither read nor built from records since
// an exec: it ran before the watcher started) gives nothing; then the
// reads and Inherit stand.
//
// at is the record's CLOCK_MONOTONIC time. Only a /proc read of child made
// since then is of this process: its mark of an event (seen) and its perf
// map carry over to the new set. An older one is of a process that had the
// pid before; its marks would keep the new process from ever being pruned.
func (h *History) Fork(child, parent int, at uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.procs[parent]
	if p == nil || !(p.recorded || p.read) || !p.hasFile() {
		return
	}
	p.shared = true // the child's set starts as the same maps and objects
	q := &Image{h: h, maps: p.maps, open: p.open, shared: true, comm: p.comm,
		parent: parent, recorded: true, last: time.Now()}
	if c := h.procs[child]; c != nil && c.readAt >= at {
		q.seen, q.jit, q.readAt = c.seen, c.jit, c.readAt
	} else if c != nil {
		c.jit.Release()
	}
	h.procs[child] = q
}

// ExecReset forgets pid's mappings: it exec'd and has a new address space,
// and comm, the name the exec gave it.
// A process whose perf map was read gets it read again now: the exec
// record is handled up to a tick after the exec (or at the end of the run),
// so the map read meanwhile may be the new image's already. When the
// process is gone by then, the map read is kept, as it most likely is.
//
// The mappings it had are kept as an earlier set (generations.go): samples
// counted under its comm before the exec are symbolized with them. A set
// that has the exec's comm already is kept as the current one, the
// records that follow added to it: it was read from /proc after this exec
// (the record is handled up to a tick later), or the program re-executed
// itself, when comm cannot tell the two images apart anyway. A set built
// from records (Fork) is always retired: the records are in order.
// From here on the set is built from the records (see merge).
func (h *History) ExecReset(pid int, comm string) {
	h.mu.Lock()
	p := h.procs[pid]
	if p != nil && !p.recorded && p.comm == comm && comm != "" {
		p.last, p.recorded = time.Now(), true
		h.mu.Unlock()
		return
	}
	q := &Image{h: h, open: map[string]*objfile.Object{}, last: time.Now(), comm: comm, recorded: true}
	if p != nil {
		q.seen, q.before, q.parent = p.seen, p.before, p.parent
		q.addBefore(p.retired())
	}
	h.procs[pid] = q // the records that follow are the new image's
	h.mu.Unlock()
	if p != nil && p.jit != nil {
		h.rereadPerfMap(pid, p, comm)
	}
}
