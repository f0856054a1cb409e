package symbolize

import (
	"github.com/probee/probee/internal/kallsyms"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// procMaps is a snapshot of one process's executable mappings.
type procMaps struct {
	maps   []procmaps.Mapping         // executable mappings, sorted by Start
	open   map[string]*objfile.Object // mapping path -> loaded object (nil: unreadable)
	seen   bool                       // snapshotted: the process produced an event
	read   bool                       // a /proc read gave the set (whole as of then)
	last   time.Time                  // when AddMapping last recorded a mapping
	gone   time.Time                  // when Prune first found the process gone (reused pids only)
	jit    *jitMap                    // its perf map, from the first snapshot on (nil: process gone by then)
	comm   string                     // the process's comm while these were its mappings ("" unknown)
	parent int                        // the tgid it was forked from, when known (see setFor)
	// recorded: the set is built from the kernel's records alone since the
	// process's fork or last exec, in their order (generations.go)
	recorded bool
	before   []*procMaps // its mapping sets before its execs, oldest first (generations.go)
	// memo holds the frames of this set's addresses (AppendFrameRefs); nil
	// whenever the set, its objects or its perf map change (frameMemo
	// checks the map's growth).
	memo *frameMemo
	// loaded: every file mapping has had its object loaded (or tried);
	// set by loadMissing, cleared by insert.
	loaded bool
	// shared: maps and open are another set's too (Fork), copied before
	// they change (own). A forked child most often execs at once, and its
	// copy of the parent's set, kept as its set before the exec, never
	// changes: a system-wide run kept one copy per exec'd process.
	shared bool
}

// Symbolizer turns addresses into frames. Processes are snapshotted when
// first seen and kept after they exit. Objects are shared through the
// Index (one read per file identity). Safe for concurrent use.
type Symbolizer struct {
	idx          *objfile.Index
	root         string // prefixed to /proc and the mapped files' paths ("/": none)
	kallsymsPath string
	warn         warnings

	mu     sync.Mutex
	procs  map[int]*procMaps
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

	kernOnce sync.Once
	ksyms    []kallsyms.Symbol

	dw dwarfFrames

	unknown procMaps    // the empty set: what AppendFrameRefs uses for a pid unknown and gone
	objMemo *objectMemo // frames in ELF files (framememo.go), under mu
	evicted evictions   // sweeps of the per-file caches (evict.go)
	scratch []Frame     // AppendFrameRefs' buffer, under mu

	heldPerfMaps atomic.Int32 // processes whose perf map is kept open (see jitMap)
	bootOnce     sync.Once
	boot         time.Time // btime, for the age of perf maps
}

// Snapshot reads pid's mappings and loads their ELF objects now, so the
// process can be symbolized after it exits. Calling it again refreshes the
// snapshot (new mappings after dlopen); mappings already known and not
// overlapped by the new snapshot are kept. A process that exited before
// it could be read keeps the mappings its records built (AddMapping, Fork)
// and is marked seen all the same: it produced an event, and Prune must
// not forget how to name it.
func (s *Symbolizer) Snapshot(pid int) error {
	maps, comm, err := s.readProcess(pid)
	if err != nil {
		s.mu.Lock()
		if p := s.procs[pid]; p != nil {
			p.seen = true
		}
		s.announced[pid] = true
		s.mu.Unlock()
		return err
	}
	s.SnapshotMaps(pid, maps, comm)
	return nil
}

// SnapshotMaps is Snapshot from mappings the caller has just read from
// /proc/PID/maps (the unwind-table loader reads them too: one read serves
// both), with the comm they go with (procmaps.ReadProcess; "" unknown).
func (s *Symbolizer) SnapshotMaps(pid int, maps []procmaps.Mapping, comm string) {
	p := &procMaps{maps: execMappings(maps), open: map[string]*objfile.Object{}, jit: s.jitMapOf(pid), comm: comm}
	var files []procmaps.Mapping
	for _, m := range p.maps {
		if _, ok := p.open[m.Path]; m.File() && !ok {
			p.open[m.Path] = nil
			files = append(files, m)
		}
	}
	for i, o := range s.load(pid, files) {
		p.open[files[i].Path] = o
	}
	s.mu.Lock()
	s.merge(pid, p)
	s.mu.Unlock()
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

// load reads the objects of pid's file mappings, each opened by the path
// that names the mapped file (see mappedFile). A mapping whose
// file no path opens any more (the process exited, and its path is
// relative to a root that is gone with it: a container) gets the object
// already read for the same file (device and inode) from another
// mapping, if any; nil otherwise.
func (s *Symbolizer) load(pid int, files []procmaps.Mapping) []*objfile.Object {
	out := make([]*objfile.Object, len(files))
	var paths []string
	var idx []int
	for i, m := range files {
		p, err := s.mappedFile(pid, m)
		if err != nil {
			s.mu.Lock()
			out[i] = s.byFile[m.FileKey()]
			s.mu.Unlock()
			continue
		}
		paths, idx = append(paths, p), append(idx, i)
	}
	objs, errs := s.idx.LoadAllMapped(paths)
	for _, err := range errs {
		s.warn.limit(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for j, o := range objs {
		if o != nil {
			out[idx[j]] = o
			s.byFile[files[idx[j]].FileKey()] = o
		}
	}
	return out
}

// merge adds a snapshot to what is known of pid (mappings recorded as they
// were created, see AddMapping): the snapshot wins where they overlap. A
// process read while it exits shows no mappings; it keeps the recorded ones.
// A set built from records alone takes only the mappings that overlap
// none of its own: what the records did not report ([uprobes], a record
// lost); the read may have met a later exec, whose image must not replace
// this one's.
func (s *Symbolizer) merge(pid int, p *procMaps) {
	s.announced[pid] = true
	old := s.procs[pid]
	if old == nil {
		p.seen, p.read = true, true
		s.procs[pid] = p
		return
	}
	old.seen, old.memo = true, nil
	if old.jit == nil {
		old.jit = p.jit
	} else if p.jit != old.jit {
		p.jit.release()
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

// addMissing adds the mappings of maps (a /proc read) that overlap none
// of p's.
func (p *procMaps) addMissing(maps []procmaps.Mapping) {
	for _, m := range maps {
		if !p.overlaps(m) {
			p.insert(m)
		}
	}
}

// Forget drops pid's snapshot.
func (s *Symbolizer) Forget(pid int) {
	s.mu.Lock()
	p := s.procs[pid]
	delete(s.procs, pid)
	s.mu.Unlock()
	if p != nil {
		p.jit.release()
	}
}

// Frames symbolizes user addresses of pid, counted under comm ("": any),
// exactly as given: callers pass pc-1 for return addresses. A pid never
// seen is snapshotted first. comm picks the mapping set of the stack's
// exec when the process exec'd since (generations.go).
// Frames are leaf first. Where the object has DWARF, frames carry File and
// Line, and an address inside inlined calls expands into one Inline frame
// per call, innermost first, before its physical frame (see SetInline): the
// result may then be longer than addrs.
func (s *Symbolizer) Frames(pid int, comm string, addrs []uint64) []Frame {
	return s.AppendFrames(nil, pid, comm, addrs)
}

// AppendFrames is Frames appending to dst: a caller symbolizing many stacks
// reuses one buffer.
func (s *Symbolizer) AppendFrames(dst []Frame, pid int, comm string, addrs []uint64) []Frame {
	p := s.setOf(pid, comm, addrs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range addrs {
		f, o, va := p.locate(a)
		dst = s.dw.expand(dst, f, o, va)
	}
	return dst
}

// setOf is the mapping set that symbolizes addrs of pid counted under comm
// (setFor), with its objects loaded and its perf map read as far as addrs
// need; nil when pid is unknown and gone.
func (s *Symbolizer) setOf(pid int, comm string, addrs []uint64) *procMaps {
	s.mu.Lock()
	p := s.procs[pid]
	s.mu.Unlock()
	if p == nil || len(p.maps) == 0 { // never seen, or exec'd with no record since
		_ = s.Snapshot(pid)
		s.mu.Lock()
		p = s.procs[pid]
		s.mu.Unlock()
	}
	if p == nil {
		return nil
	}
	s.mu.Lock()
	p, pid = s.setFor(pid, p, comm, addrs)
	s.mu.Unlock()
	s.loadMissing(pid, p)
	s.refreshJIT(p, addrs)
	return p
}

func (p *procMaps) frame(addr uint64) Frame {
	f, _, _ := p.locate(addr)
	return f
}

// locate symbolizes addr from the ELF symbols and returns the object and
// virtual address it falls in (nil when no readable file maps it).
func (p *procMaps) locate(addr uint64) (Frame, *objfile.Object, uint64) {
	f := Frame{Addr: addr}
	if p == nil {
		return f, nil, 0
	}
	m, ok := p.mappingAt(addr)
	if !ok {
		return p.jitFrame(f), nil, 0
	}
	f.Module = m.Path
	if m.Path == "" {
		f.Module = "[anon]"
	}
	f.ModuleOffset = addr - m.Start
	if vdsoFrame(&f, m) {
		return f, nil, 0
	}
	if !m.File() {
		return p.jitFrame(f), nil, 0
	}
	f.ModuleOffset += m.Offset
	o := p.open[m.Path]
	if o == nil {
		return f, nil, 0
	}
	f.BuildID = o.BuildID
	va, ok := o.VirtAddr(f.ModuleOffset)
	if !ok {
		return f, nil, 0
	}
	f.VirtAddr = va
	nameFrame(&f, o, va)
	return f, o, va
}

// mappingAt returns the executable mapping holding addr.
func (p *procMaps) mappingAt(addr uint64) (procmaps.Mapping, bool) {
	i := sort.Search(len(p.maps), func(i int) bool { return p.maps[i].End > addr })
	if i == len(p.maps) || addr < p.maps[i].Start {
		return procmaps.Mapping{}, false
	}
	return p.maps[i], true
}

// nameFrame fills f's function from the virtual address va of o
// (objfile.Object.SymbolAt).
func nameFrame(f *Frame, o *objfile.Object, va uint64) {
	if sym, name := o.SymbolAt(va); sym != nil {
		f.Symbol, f.Function, f.Offset = sym.Name, name, va-sym.Addr
	}
}
