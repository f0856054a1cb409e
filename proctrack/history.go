package proctrack

import (
	"slices"
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/monotime"
	"github.com/probee/probee/internal/perfmap"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// History is the mapping history of the processes probee heard of: for
// each, the mapping sets of the images it ran (Image: its current one and
// those before its execs, generations.go), built from /proc reads
// (Snapshot, Prime) and from the kernel's mapping records, in their order
// (AddMapping, Fork, ExecReset, Inherit), with the objects of the files
// they map read while the process lives and its perf map kept open. It is
// kept after a process exits, until the process is forgotten (Forget) or
// found gone without having produced an event (Prune): the symbolizer
// names a stack's addresses from it (ImageOf) and the deferred-stack
// finisher unwinds with it (Mappings). A Tracker keeps it up to date.
// Safe for concurrent use.
type History struct {
	proc procFS
	idx  *objfile.Index
	warn fileid.Warnings
	perf *perfmap.Opener

	mu     sync.Mutex
	procs  map[int]*Image
	byFile map[procmaps.FileKey]*objfile.Object // every object read, by the mapped file's identity
	// announced: the pids that have produced an event (snapshotted),
	// forgotten or not. The kernel announces a tgid again only once the
	// task that held it is freed (probee_free clears its seen entry): the
	// events of a process given the pid before then find the old entry
	// and announce nothing, so Prune cannot tell that process from one
	// that never hit a probe (see Prune). At most one entry per pid.
	announced map[int]bool

	preloads   []preloadReq // mappings to read while their process lives (see preload)
	preloading bool         // runPreloads is running
	swept      sweep        // the last sweep of the per-file caches (prune.go)
}

// HistoryConfig is where a History reads.
type HistoryConfig struct {
	// Root is prefixed to /proc and to the paths of the files processes
	// map; "" is "/".
	Root string
	// Objects reads the ELF objects of the files mapped (share a
	// resolver's: resolver.Resolver.Index); nil is a new index with
	// separate debug files under Root's /usr/lib/debug.
	Objects *objfile.Index
	// Warnf receives warnings (a file or a perf map past a budget); nil
	// discards them.
	Warnf func(format string, args ...any)
}

// NewHistory returns an empty History reading where cfg says.
func NewHistory(cfg HistoryConfig) *History {
	if cfg.Root == "/" {
		cfg.Root = ""
	}
	h := &History{proc: procFS{cfg.Root}, idx: cfg.Objects, warn: fileid.Warnings{Printf: cfg.Warnf},
		perf:  &perfmap.Opener{Root: cfg.Root, Warnf: cfg.Warnf},
		procs: map[int]*Image{}, byFile: map[procmaps.FileKey]*objfile.Object{}, announced: map[int]bool{}}
	if h.idx == nil {
		h.idx = objfile.NewIndex(objfile.DebugDir(cfg.Root, ""))
	}
	return h
}

// Snapshot reads pid's mappings and loads their ELF objects now, so the
// process can be symbolized after it exits. Calling it again refreshes the
// snapshot (new mappings after dlopen); mappings already known and not
// overlapped by the new snapshot are kept. A process that exited before
// it could be read keeps the mappings its records built (AddMapping, Fork)
// and is marked seen all the same: it produced an event, and Prune must
// not forget how to name it.
func (h *History) Snapshot(pid int) error {
	at := monotime.Now()
	read, err := h.proc.readMaps(pid)
	if err != nil {
		h.mu.Lock()
		if p := h.procs[pid]; p != nil {
			p.seen = true
		}
		h.announced[pid] = true
		h.mu.Unlock()
		return err
	}
	h.snapshotAt(pid, read.maps, read.comm, at)
	return nil
}

// SnapshotMaps is Snapshot from mappings the caller has just read from
// /proc/PID/maps (the unwind-table loader reads them too: one read serves
// both), with the comm they go with (procmaps.ReadProcess; "" unknown).
func (h *History) SnapshotMaps(pid int, maps []procmaps.Mapping, comm string) {
	h.snapshotAt(pid, maps, comm, monotime.Now())
}

// snapshotAt is SnapshotMaps of mappings read at CLOCK_MONOTONIC time at
// (Fork tells a read of the forked child from one of an earlier process
// on its pid by it).
func (h *History) snapshotAt(pid int, maps []procmaps.Mapping, comm string, at uint64) {
	p := &Image{h: h, maps: execMappings(maps), open: map[string]*objfile.Object{}, jit: h.perfMapOf(pid), comm: comm, readAt: at}
	var files []procmaps.Mapping
	for _, m := range p.maps {
		if _, ok := p.open[m.Path]; m.File() && !ok {
			p.open[m.Path] = nil
			files = append(files, m)
		}
	}
	for i, o := range h.load(pid, files) {
		p.open[files[i].Path] = o
	}
	h.mu.Lock()
	h.merge(pid, p)
	h.mu.Unlock()
}

// merge adds a snapshot to what is known of pid (mappings recorded as they
// were created, see AddMapping): the snapshot wins where they overlap. A
// process read while it exits shows no mappings; it keeps the recorded ones.
// A set built from records alone takes only the mappings that overlap
// none of its own: what the records did not report ([uprobes], a record
// lost); the read may have met a later exec, whose image must not replace
// this one's.
func (h *History) merge(pid int, p *Image) {
	h.announced[pid] = true
	old := h.procs[pid]
	if old == nil {
		p.seen, p.read = true, true
		h.procs[pid] = p
		return
	}
	old.seen, old.readAt = true, max(old.readAt, p.readAt)
	old.changed()
	if old.jit == nil {
		old.jit = p.jit
	} else if p.jit != old.jit {
		p.jit.Release()
	}
	if old.recorded {
		old.addMissing(p.maps)
		return
	}
	if old.comm == "" {
		old.comm = p.comm
	}
	old.read = true
	for _, m := range p.maps {
		old.insert(m)
	}
	for k, o := range p.open {
		if old.open[k] == nil {
			old.own()
			old.open[k] = o
		}
	}
}

// Forget drops what is known of pid (its stacks were all symbolized).
func (h *History) Forget(pid int) {
	h.mu.Lock()
	p := h.procs[pid]
	delete(h.procs, pid)
	h.mu.Unlock()
	if p != nil {
		p.jit.Release()
	}
}

// ImageOf is the image that ran a stack of pid counted under comm through
// addrs (setFor), with the objects of its files loaded and its perf map
// read as far as addrs need; nil when pid is unknown and gone. A pid never
// seen, or seen exec'ing with no record since, is snapshotted first.
func (h *History) ImageOf(pid int, comm string, addrs []uint64) *Image {
	h.mu.Lock()
	p := h.procs[pid]
	empty := p == nil || len(p.maps) == 0
	h.mu.Unlock()
	if empty { // never seen, or exec'd with no record since
		_ = h.Snapshot(pid)
		h.mu.Lock()
		p = h.procs[pid]
		h.mu.Unlock()
	}
	if p == nil {
		return nil
	}
	h.mu.Lock()
	p, pid = h.setFor(pid, p, comm, addrs)
	h.mu.Unlock()
	h.loadMissing(pid, p)
	h.refreshPerfMap(p, addrs)
	return p
}

// Mappings returns the executable mappings, sorted by start, of the set
// that names a stack of pid counted under comm through pcs (the set
// ImageOf gives, see setFor; nil when pid is unknown): what unwinding
// that stack in user space needs, also after the process exited or
// exec'd, or its parent did.
func (h *History) Mappings(pid int, comm string, pcs []uint64) []procmaps.Mapping {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p := h.procs[pid]; p != nil {
		g, _ := h.setFor(pid, p, comm, pcs)
		return slices.Clone(g.maps)
	}
	return nil
}
