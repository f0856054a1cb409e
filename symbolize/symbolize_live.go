package symbolize

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// AddMapping records one executable mapping of pid as the kernel reported
// it when it was created (bpf.MmapWatcher). Processes that exit before
// Snapshot can read /proc/PID/maps are symbolized from these. The
// mapping's ELF object is loaded lazily, when Frames first needs it,
// unless its path does not name the file on the host (see preload). The
// kernel's name of anonymous memory, "//anon", becomes "" as in
// /proc/PID/maps (it is no file).
func (s *Symbolizer) AddMapping(pid int, m procmaps.Mapping) {
	if m.Path == perfAnon {
		m.Path = ""
	}
	s.mu.Lock()
	p := s.procs[pid]
	if p == nil {
		p = &procMaps{open: map[string]*objfile.Object{}}
		s.procs[pid] = p
	}
	p.insert(m)
	p.last = time.Now()
	_, known := s.byFile[m.FileKey()]
	s.mu.Unlock()
	if m.File() && !known {
		s.preload(pid, m)
	}
}

// maxPreloads is how many preloads may wait; a burst beyond it leaves the
// rest to Frames.
const maxPreloads = 4096

// preloadReq is a mapping to read while its process lives.
type preloadReq struct {
	pid int
	m   procmaps.Mapping
}

// preload reads soon, while pid lives, the object of a mapping whose path
// does not name the mapped file in probee's view: a container's path (the
// kernel's records give paths relative to the mapping process's root), or
// a file deleted since. Once pid is gone, such a file is found only among
// the objects already read (byFile). One goroutine reads them, started
// when the first waits: the record reader does not wait.
func (s *Symbolizer) preload(pid int, m procmaps.Mapping) {
	if procmaps.Shown(s.rootPath(""), m) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.preloads) >= maxPreloads {
		return
	}
	s.preloads = append(s.preloads, preloadReq{pid, m})
	if !s.preloading {
		s.preloading = true
		go s.runPreloads()
	}
}

// runPreloads reads the waiting mappings' objects until none wait.
func (s *Symbolizer) runPreloads() {
	for {
		s.mu.Lock()
		batch := s.preloads
		s.preloads = nil
		if len(batch) == 0 {
			s.preloading = false
		}
		s.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, r := range batch {
			s.load(r.pid, []procmaps.Mapping{r.m})
		}
	}
}

// perfAnon is the path perf's MMAP records give anonymous memory.
const perfAnon = "//anon"

// Prune forgets the mappings recorded for processes that never produced an
// event (never snapshotted) and no longer run, once their last record is
// older than grace (by then the notice of an event, if there was one, has
// been handled). The kernel reports the mappings of every process on the
// machine; kept, they would grow without bound on long runs on busy
// machines. alive reports whether a pid still runs. It returns how many
// processes were forgotten. The perf maps of snapshotted processes that
// exited get their last read and are closed: the files kept open are
// those of running processes. Every sweepEvery, it lets go of the
// per-file caches of files no process it knows maps (evict.go).
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
func (s *Symbolizer) Prune(grace time.Duration, alive func(pid int) bool) int {
	s.closeExitedJIT(alive)
	now := time.Now()
	cutoff := now.Add(-grace)
	var stale []int
	s.mu.Lock()
	for pid, p := range s.procs {
		if !p.seen && p.last.Before(cutoff) {
			stale = append(stale, pid)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, pid := range stale {
		if alive(pid) {
			continue
		}
		s.mu.Lock()
		if p := s.procs[pid]; p != nil && !p.seen && p.last.Before(cutoff) && s.goneLongEnough(pid, p, now, grace) {
			delete(s.procs, pid)
			p.jit.release()
			n++
		}
		s.mu.Unlock()
	}
	s.maybeSweep(now)
	return n
}

// reusedGrace is how many graces a process on a reused pid stays once
// gone (see Prune): the merge of a gone process's counts waits 10 s and
// two drains (bpf.Session.TakeGone).
const reusedGrace = 3

// goneLongEnough reports whether Prune may forget p, gone: at once unless
// its pid was announced before, else once it has been gone reusedGrace
// times grace (the first call notes when it was found gone). Call with
// s.mu held.
func (s *Symbolizer) goneLongEnough(pid int, p *procMaps, now time.Time, grace time.Duration) bool {
	if !s.announced[pid] {
		return true
	}
	if p.gone.IsZero() {
		p.gone = now
	}
	return now.Sub(p.gone) >= reusedGrace*grace
}

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
func (s *Symbolizer) Inherit(child, parent int) {
	s.mu.Lock()
	c := s.procs[child]
	s.mu.Unlock()
	if c != nil && c.recorded {
		return // its fork record made it (Fork)
	}
	if c.hasFile() && c.comm == "" {
		return // no comm to tell its sets apart by
	}
	_ = s.Snapshot(parent) // fresh: the parent may have exec'd since it was seen
	s.mu.Lock()
	defer s.mu.Unlock()
	p, c := s.procs[parent], s.procs[child]
	if p == nil {
		return
	}
	q := &procMaps{maps: slices.Clone(p.maps), open: maps.Clone(p.open), seen: true, read: true, comm: p.comm, parent: parent}
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
	s.procs[child] = q
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
func (s *Symbolizer) Fork(child, parent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[parent]
	if p == nil || !(p.recorded || p.read) || !p.hasFile() {
		return
	}
	p.shared = true // the child's set starts as the same maps and objects
	q := &procMaps{maps: p.maps, open: p.open, shared: true, comm: p.comm,
		parent: parent, recorded: true, last: time.Now()}
	if c := s.procs[child]; c != nil {
		q.seen, q.jit = c.seen, c.jit
	}
	s.procs[child] = q
}

// hasFile reports whether a file mapping is known of the process.
func (p *procMaps) hasFile() bool {
	return p != nil && slices.ContainsFunc(p.maps, procmaps.Mapping.File)
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
func (s *Symbolizer) ExecReset(pid int, comm string) {
	s.mu.Lock()
	p := s.procs[pid]
	if p != nil && !p.recorded && p.comm == comm && comm != "" {
		p.last, p.recorded = time.Now(), true
		s.mu.Unlock()
		return
	}
	q := &procMaps{open: map[string]*objfile.Object{}, last: time.Now(), comm: comm, recorded: true}
	if p != nil {
		q.seen, q.before, q.parent = p.seen, p.before, p.parent
		q.addBefore(p.retired())
	}
	s.procs[pid] = q // the records that follow are the new image's
	s.mu.Unlock()
	if p != nil && p.jit != nil {
		s.rereadJIT(pid, p, comm)
	}
}

// rereadJIT gives pid's current set the perf map as it is after the exec
// that retired p (see ExecReset).
func (s *Symbolizer) rereadJIT(pid int, p *procMaps, comm string) {
	m := s.newJITMap(pid)
	if m == nil {
		m = p.jit
	} else {
		p.jit.release()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.procs[pid]
	if q == nil {
		q = &procMaps{open: map[string]*objfile.Object{}, seen: p.seen, last: time.Now(), before: p.before, comm: comm}
		s.procs[pid] = q
	}
	if q.jit == nil {
		q.jit, q.memo = m, nil
	} else {
		m.release()
	}
}

// insert adds m, dropping older mappings it overlaps (MAP_FIXED remaps).
func (p *procMaps) insert(m procmaps.Mapping) {
	p.own()
	kept := p.maps[:0]
	for _, old := range p.maps {
		if old.End <= m.Start || old.Start >= m.End {
			kept = append(kept, old)
		}
	}
	p.memo, p.loaded = nil, false
	i := sort.Search(len(kept), func(i int) bool { return kept[i].Start >= m.Start })
	kept = append(kept, procmaps.Mapping{})
	copy(kept[i+1:], kept[i:])
	kept[i] = m
	p.maps = kept
}

// loadMissing loads the objects of pid's mappings added without one.
func (s *Symbolizer) loadMissing(pid int, p *procMaps) {
	s.mu.Lock()
	if p.loaded {
		s.mu.Unlock()
		return
	}
	p.loaded = true
	files := p.missingFiles()
	if len(files) == 0 { // a set shared with its parent stays shared
		s.mu.Unlock()
		return
	}
	p.own()
	for _, m := range files {
		p.open[m.Path] = nil // being loaded
	}
	s.mu.Unlock()
	objs := s.load(pid, files)
	s.mu.Lock()
	p.own() // a fork may have shared them meanwhile
	for i, m := range files {
		p.open[m.Path] = objs[i]
	}
	p.memo = nil
	s.mu.Unlock()
}

// missingFiles returns p's file mappings that have had no object loaded
// (or tried), one per path.
func (p *procMaps) missingFiles() []procmaps.Mapping {
	var files []procmaps.Mapping
	for _, m := range p.maps {
		if _, ok := p.open[m.Path]; !ok && m.File() &&
			!slices.ContainsFunc(files, func(f procmaps.Mapping) bool { return f.Path == m.Path }) {
			files = append(files, m)
		}
	}
	return files
}

// closeExitedJIT reads and closes the perf maps of processes that exited.
func (s *Symbolizer) closeExitedJIT(alive func(pid int) bool) {
	type held struct {
		pid int
		m   *jitMap
	}
	var hs []held
	s.mu.Lock()
	for pid, p := range s.procs {
		if p.jit.holding() {
			hs = append(hs, held{pid, p.jit})
		}
	}
	s.mu.Unlock()
	for _, h := range hs {
		if !alive(h.pid) {
			h.m.refresh()
		}
	}
}

// Mappings returns the executable mappings, sorted by start, of the set
// that names a stack of pid counted under comm through pcs (the set
// Frames uses, see setFor; nil when pid is unknown): what unwinding that
// stack in user space needs, also after the process exited or exec'd, or
// its parent did.
func (s *Symbolizer) Mappings(pid int, comm string, pcs []uint64) []procmaps.Mapping {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.procs[pid]; p != nil {
		g, _ := s.setFor(pid, p, comm, pcs)
		return slices.Clone(g.maps)
	}
	return nil
}
