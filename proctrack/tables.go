package proctrack

import (
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// tables keeps the kernel's unwind mappings of tracked processes up to
// date: for -p and -- CMD targets at start and whenever ld.so has mapped
// new objects (the ld.so gate holds the process until they are loaded,
// see attachLdsoGate), for other processes when they are first seen,
// and on every new executable mapping record (mappings the gate does not
// see: mmap'd code, another ld.so).
type tables struct {
	t      *Tracker
	cache  *unwind.Cache
	goByFP bool                        // Go binaries get an empty table
	after  func(time.Duration, func()) // time.AfterFunc; tests fire it by hand
	loadMu sync.Mutex                  // serializes loadProcess
	mu     sync.Mutex
	procs  map[int][]procmaps.Mapping  // tracked tgids and their executable mappings
	goBins map[fileID]*unwind.GoBinary // file -> what Go linked (nil: not Go; see modules)
	dirty  map[int]bool                // tracked tgids with new mappings, reloaded by reloadDirty
	closed bool                        // set by stop: the kernel session is going away
	files  *fileLoader                 // nil: no system-wide loading by file
	said   map[string]bool             // warnings given (tableErrors)
	swept  time.Time                   // the last sweep (evict.go)
	idle   time.Duration               // tableIdle; tests set 0
}

// reloadDelay batches the mapping records of a process (ld.so maps several
// libraries at once; records arrive every 50 ms) into one /proc/PID/maps
// read, well within the 100 ms in which a new mapping must be unwound.
const reloadDelay = 2 * time.Millisecond

func newTables(t *Tracker, cache *unwind.Cache, goByFP bool) *tables {
	if cache == nil {
		cache = unwind.NewCache()
	}
	return &tables{t: t, cache: cache, goByFP: goByFP,
		after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }, idle: tableIdle,
		procs: map[int][]procmaps.Mapping{}, goBins: map[fileID]*unwind.GoBinary{}, dirty: map[int]bool{}, said: map[string]bool{}}
}

// loadProcess reads pid's mappings from /proc, loads their tables and
// returns what it read (no mappings when it read none). It is called from the
// notice and the mapping goroutines; reading and pushing under one lock
// makes the last push the freshest read (an older, partial read pushed
// after the gate's full one would cut stacks).
func (d *tables) loadProcess(pid int) snapshot {
	d.loadMu.Lock()
	defer d.loadMu.Unlock()
	if d.closed {
		return snapshot{}
	}
	read, err := d.t.proc.readMaps(pid)
	if err != nil {
		d.t.debugf("unwind tables of pid %d: %v", pid, err)
		return snapshot{}
	}
	var exec []procmaps.Mapping
	for _, m := range read.maps {
		if m.Exec() {
			exec = append(exec, m)
		}
	}
	d.mu.Lock()
	d.procs[pid] = exec
	d.mu.Unlock()
	d.push(pid, exec)
	return read
}

// loadVDSO gives the kernel the vDSO's table to find by identity (it has
// no file: bpf keys it apart), so a process never registered (a child
// before its notice, system-wide) unwinds out of clock_gettime from its
// first event.
func (d *tables) loadVDSO() {
	m, err := d.cache.VDSOModule()
	if err == nil {
		err = d.t.k.SetFileModules([]unwind.Module{m})
	}
	if err != nil {
		d.t.debugf("vdso unwind table: %v", err)
	}
}

// stop ends table loading before the session closes; it waits for a load
// in progress.
func (d *tables) stop() {
	if d.files != nil {
		d.files.close()
	}
	d.loadMu.Lock()
	d.closed = true
	d.loadMu.Unlock()
}

// tableErrors reports the errors of building tables: a file past a
// budget (internal/safeelf.ErrBudget: its stacks are walked by frame
// pointers) in one warning naming it, once; the others (a process gone, a
// file without CFI) in debug lines.
func (d *tables) tableErrors(errs []error) {
	for _, err := range errs {
		if !fileid.PastBudget(err) {
			d.t.debugf("unwind table: %v", err)
			continue
		}
		msg := err.Error()
		d.mu.Lock()
		said := d.said[msg]
		d.said[msg] = true
		d.mu.Unlock()
		if !said {
			d.t.warnf("%v (its stacks are walked by frame pointers)", err)
		}
	}
}

// push resolves the mappings' tables and writes them to the kernel.
func (d *tables) push(pid int, maps []procmaps.Mapping) {
	mods, errs := d.modules(pid, maps)
	d.tableErrors(errs)
	if err := d.t.k.SetProcessModules(pid, mods); err != nil {
		d.t.warnf("unwind tables of pid %d: %v", pid, err)
	}
}

// newProcess loads the tables of a process seen for the first time and
// returns what it read (no mappings when it read none: the process is
// already tracked, or gone).
func (d *tables) newProcess(pid int) snapshot {
	d.mu.Lock()
	_, known := d.procs[pid]
	d.mu.Unlock()
	if known {
		return snapshot{}
	}
	return d.loadProcess(pid)
}

// gateStop loads the tables of a process a gate stopped, puts the ld.so
// gate on its ld.so if that is a new one (it exec'd a program of another
// root: the root gate), then resumes it: its next instruction may run
// code that was just mapped.
func (d *tables) gateStop(ev wire.ProcessEvent) {
	pid := ev.TGID
	d.loadProcess(pid)
	if err := d.t.attachPIDGate(pid); err != nil {
		d.t.debugf("%v", err) // a process gone, or a static program: nothing to gate
	}
	if err := d.t.k.Continue(ev); err != nil {
		d.t.warnf("%v", err)
	}
}

// exit forgets pid: a new process given the same pid starts afresh.
func (d *tables) exit(pid int) {
	d.mu.Lock()
	delete(d.procs, pid)
	d.mu.Unlock()
	d.maybeSweep(time.Now())
}

// onMmap reloads a tracked process's mappings when it maps new code
// (exec, dlopen). /proc/PID/maps is re-read rather than patched with the
// record: records arrive up to 60 ms late, and a list rebuilt from them
// would briefly lack mappings the gate already loaded. The records of one
// process are coalesced into one reload (see reloadDelay).
func (d *tables) onMmap(ev wire.MmapEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ev.Exec {
		return // the new program's mappings follow
	}
	known, ok := d.procs[ev.PID]
	if !ok || d.dirty[ev.PID] {
		return
	}
	for _, m := range known {
		// By identity: a chrooted process's maps show host paths, its
		// records paths in its own root.
		if m.Start == ev.Start && m.End == ev.End && m.Dev == ev.Dev && m.Inode == ev.Ino {
			return // already loaded
		}
	}
	if len(d.dirty) == 0 {
		d.after(reloadDelay, d.reloadDirty)
	}
	d.dirty[ev.PID] = true
}

// reloadDirty reloads the processes onMmap marked.
func (d *tables) reloadDirty() {
	d.mu.Lock()
	pids := slices.Sorted(maps.Keys(d.dirty))
	clear(d.dirty)
	d.mu.Unlock()
	for _, pid := range pids {
		d.loadProcess(pid)
	}
}

// modules resolves pid's executable mappings to their tables. Each file
// is opened by the path procmaps.File finds for it: the path the maps
// show when it names the mapped file (the host's, outliving the process;
// the cache knows the file from it), else through /proc/PID/root or
// /proc/PID/map_files (containers, deleted files).
//
// Under --unwind auto, Go binaries get an empty table without building
// one: Go on amd64 always keeps frame pointers, and its FP chains are
// complete where its CFI-based walk is not yet (see bpf/doc.go).
// --unwind dwarf still uses the tables.
func (d *tables) modules(pid int, all []procmaps.Mapping, kin ...int) ([]unwind.Module, []error) {
	var mods []unwind.Module
	var build []procmaps.Mapping
	var errs []error
	paths := map[uint64]string{} // mapping start -> the path that opens its file
	for _, m := range all {
		if m.Path == unwind.VDSOPath {
			build = append(build, m) // the cache's own copy (unwind/vdso.go)
			continue
		}
		if !m.Exec() || !filepath.IsAbs(m.Path) {
			continue // anonymous, [uprobes], JIT code
		}
		path, err := procmaps.File(d.t.proc.root, pid, m, kin...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if gb := d.goBinary(m, path); gb != nil {
			mods = append(mods, gb.Module(m, path))
			continue
		}
		paths[m.Start] = path
		build = append(build, m)
	}
	built, berrs := d.cache.Modules(build, func(m procmaps.Mapping) (string, error) { return paths[m.Start], nil })
	return append(mods, built...), append(errs, berrs...)
}

// goBinary returns what Go linked of m's file, opened at path; nil when Go
// did not link it (remembered per file identity: paths under /proc/PID are
// new for every process). Without runtime.morestack's form (GoStack) a
// binary is walked by frame pointers all the same; it is said once, in
// the debug lines.
func (d *tables) goBinary(m procmaps.Mapping, path string) *unwind.GoBinary {
	if !d.goByFP {
		return nil // --unwind dwarf: Go binaries get their tables too
	}
	id := fileID{m.Dev, m.Inode}
	d.mu.Lock()
	gb, ok := d.goBins[id]
	d.mu.Unlock()
	if ok {
		return gb
	}
	if b, isGo, _ := unwind.ReadGoBinary(path); isGo {
		gb = &b
		if b.StackErr != nil {
			d.t.debugf("%s: stacks that grow are walked only to runtime.morestack: %v", m.Path, b.StackErr)
		}
	}
	d.mu.Lock()
	d.goBins[id] = gb
	d.mu.Unlock()
	return gb
}
