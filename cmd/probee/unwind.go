package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/resolver"
	"github.com/probee/probee/unwind"
)

// dwarfTables keeps the kernel's unwind mappings of traced processes up to
// date: tables for -p and -- CMD targets at start and whenever ld.so has
// mapped new objects (the ld.so gate holds the process until they are
// loaded, see attachGate), lazily for other processes on their first event,
// and on every new executable mapping from the mmap watcher (mappings the
// gate does not see: mmap'd code, another ld.so).
type dwarfTables struct {
	t      *tracer
	cache  *unwind.Cache
	loadMu sync.Mutex // serializes loadProcess
	mu     sync.Mutex
	procs  map[int][]unwind.Mapping // tracked tgids and their executable mappings
	goBins map[string]bool          // path -> linked by Go (see modules)
	dirty  map[int]bool             // tracked tgids with new mappings, reloaded by reloadDirty
	execs  map[int]bool             // tracked commands that have not exec'd yet
	closed bool                     // set by stop: the session is going away
	files  *fileLoader              // nil: the kernel does not find tables by file
}

// reloadDelay batches the mapping records of a process (ld.so maps several
// libraries at once; records arrive every 50 ms) into one /proc/PID/maps
// read, well within the 100 ms in which a new mapping must be unwound.
const reloadDelay = 2 * time.Millisecond

func (t *tracer) dwarfOn() bool { return t.cfg.unwind.dwarf() }

func newDwarfTables(t *tracer) *dwarfTables {
	d := &dwarfTables{t: t, cache: unwind.NewCache(), procs: map[int][]unwind.Mapping{}, goBins: map[string]bool{}, dirty: map[int]bool{}, execs: map[int]bool{}}
	// System-wide only: under -- CMD and -p the ld.so gate holds every
	// traced process that starts a program until its tables are loaded.
	if t.sess.FindsTablesByFile() && t.cfg.pid == 0 && len(t.cfg.command) == 0 {
		d.files = newFileLoader(d)
	}
	return d
}

// loadProcess reads pid's mappings from /proc, loads their tables and
// returns the mappings read (nil when none were). It is called from the
// event and the mmap goroutines; reading and pushing under one lock makes
// the last push the freshest read (an older, partial read pushed after the
// exec gate's full one would cut stacks).
func (d *dwarfTables) loadProcess(pid int) []unwind.Mapping {
	d.loadMu.Lock()
	defer d.loadMu.Unlock()
	if d.closed {
		return nil
	}
	all, err := unwind.ReadMaps(pid)
	if err != nil {
		d.t.status.debugf("unwind tables of pid %d: %v", pid, err)
		return nil
	}
	var exec []unwind.Mapping
	for _, m := range all {
		if m.Exec() {
			exec = append(exec, m)
		}
	}
	d.mu.Lock()
	d.procs[pid] = exec
	d.mu.Unlock()
	d.push(pid, exec)
	return all
}

// stop ends table loading before the session closes; it waits for a
// load in progress.
func (d *dwarfTables) stop() {
	if d.files != nil {
		d.files.close()
	}
	d.loadMu.Lock()
	d.closed = true
	d.loadMu.Unlock()
}

// push resolves the mappings' tables and writes them to the kernel.
func (d *dwarfTables) push(pid int, maps []unwind.Mapping) {
	mods, errs := d.modules(pid, maps)
	for _, err := range errs {
		d.t.status.debugf("unwind table: %v", err)
	}
	if err := d.t.sess.SetProcessModules(pid, mods); err != nil {
		d.t.status.warnf("unwind tables of pid %d: %v", pid, err)
	}
}

// track starts following pid's mappings (from the mmap watcher) before it
// has any: a command about to exec. Records of its mappings before the
// exec (probee's own exec shim) are ignored.
func (d *dwarfTables) track(pid int) {
	d.mu.Lock()
	if _, ok := d.procs[pid]; !ok {
		d.procs[pid] = nil
		d.execs[pid] = true
	}
	d.mu.Unlock()
}

// newProcess loads the tables of a process seen for the first time and
// returns the mappings it read (nil when it read none: the process is
// already tracked, or gone).
func (d *dwarfTables) newProcess(pid int) []unwind.Mapping {
	d.mu.Lock()
	_, known := d.procs[pid]
	d.mu.Unlock()
	if known {
		return nil
	}
	return d.loadProcess(pid)
}

// onEvent handles the gates' and exit notices.
func (d *dwarfTables) onEvent(ev bpf.ProcessEvent) {
	switch ev.Type {
	case bpf.EventGate:
		d.loadProcess(ev.TGID)
		if err := d.t.sess.Continue(ev.TGID); err != nil {
			d.t.status.warnf("%v", err)
		}
	case bpf.EventExit:
		d.mu.Lock()
		delete(d.procs, ev.TGID)
		delete(d.execs, ev.TGID)
		d.mu.Unlock()
	}
}

// onMmap reloads a tracked process's mappings when it maps new code
// (exec, dlopen). /proc/PID/maps is re-read rather than patched with the
// record: records arrive up to 50 ms late, and a list rebuilt from them
// would briefly lack mappings the exec gate already loaded. The records of
// one process are coalesced into one reload (see reloadDelay).
func (d *dwarfTables) onMmap(ev bpf.MmapEvent) {
	if d.files != nil {
		d.files.note(ev)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if ev.Exec {
		delete(d.execs, ev.PID)
		return
	}
	known, ok := d.procs[ev.PID]
	if !ok || d.dirty[ev.PID] || d.execs[ev.PID] {
		return
	}
	for _, m := range known {
		if m.Start == ev.Start && m.End == ev.End && m.Path == ev.Path {
			return // already loaded
		}
	}
	if len(d.dirty) == 0 {
		time.AfterFunc(reloadDelay, d.reloadDirty)
	}
	d.dirty[ev.PID] = true
}

// reloadDirty reloads the processes onMmap marked.
func (d *dwarfTables) reloadDirty() {
	d.mu.Lock()
	pids := slices.Sorted(maps.Keys(d.dirty))
	clear(d.dirty)
	d.mu.Unlock()
	for _, pid := range pids {
		d.loadProcess(pid)
	}
}

// defaultInterp is the ld.so every dynamically linked x86-64 program asks
// for; the interpreter of a script command (sh, python) uses it too.
const defaultInterp = "/lib64/ld-linux-x86-64.so.2"

// attachGate holds the traced command until its unwind tables are loaded.
// A dynamically linked command (or a script, through its interpreter) is
// held by the ld.so gate: at start-up once ld.so has mapped its libraries,
// before any constructor runs, and again at every dlopen, in the command
// and in every traced child that execs a program using the same ld.so. A
// static command is held at its ELF entry point.
func (t *tracer) attachGate() {
	interp, err := resolver.Interpreter(t.cmd.path)
	static := err == nil && interp == ""
	if !static {
		if interp == "" {
			interp = defaultInterp
		}
		gerr := t.attachLdsoGate(interp)
		if gerr == nil || err != nil { // attached, or a script: no entry point to fall back on
			t.gateWarn(gerr)
			return
		}
		t.status.debugf("ld.so gate: %v (using the entry point)", gerr)
	}
	off, err := resolver.EntryFileOffset(t.cmd.path)
	if err == nil {
		err = t.sess.AttachGate(t.cmd.path, off)
	}
	t.gateWarn(err)
}

func (t *tracer) gateWarn(err error) {
	if err != nil {
		t.status.warnf("exec gate: %v (the command's first stacks may be partial)", err)
	}
}

// attachLdsoGate puts the ld.so gate on the ld.so at path.
func (t *tracer) attachLdsoGate(path string) error {
	d, err := resolver.FindLdsoDebug(path)
	if err != nil {
		return err
	}
	return t.sess.AttachLdsoGate(path, d.StateOffset, d.StateAddr, d.RDebugAddr)
}

// attachPIDGate puts the ld.so gate on the ld.so of the -p process, so that
// libraries it dlopens later are unwound from their first event.
func (t *tracer) attachPIDGate(pid int) {
	root := fmt.Sprintf("/proc/%d/root", pid)
	interp, err := resolver.Interpreter(fmt.Sprintf("/proc/%d/exe", pid))
	if err == nil && interp != "" {
		err = t.attachLdsoGate(filepath.Join(root, interp))
	}
	if err != nil {
		t.status.warnf("ld.so gate for pid %d: %v (the first stacks of libraries it dlopens may be partial)", pid, err)
	}
}

// modules resolves pid's executable mappings to their tables. Files are
// opened by their host path when the process shares probee's root, so
// that the cache finds a file it already knows from its path and inode
// (a /proc/PID/root/... path is new for every process).
//
// Under --unwind auto, Go binaries get an empty table without building
// one: Go on amd64 always keeps frame pointers, and its FP chains are
// complete where its CFI-based walk is not yet (see bpf/doc.go).
// --unwind dwarf still uses the tables.
func (d *dwarfTables) modules(pid int, all []unwind.Mapping) ([]unwind.Module, []error) {
	root := rootOf(pid)
	if slices.ContainsFunc(all, func(m unwind.Mapping) bool { return m.Deleted }) {
		root = fmt.Sprintf("/proc/%d/root", pid) // the cache opens deleted files via /proc/PID/map_files
	}
	return d.modulesIn(root, all)
}

// modulesIn resolves mappings whose paths are under root.
func (d *dwarfTables) modulesIn(root string, all []unwind.Mapping) ([]unwind.Module, []error) {
	var mods []unwind.Module
	var build []unwind.Mapping
	for _, m := range all {
		if d.t.cfg.unwind.goByFramePointers() && filepath.IsAbs(m.Path) && d.isGo(filepath.Join(root, m.Path)) {
			mods = append(mods, unwind.Module{Start: m.Start, End: m.End, Path: m.Path, Table: &unwind.Table{}, Offset: m.Offset, Dev: m.Dev, Inode: m.Inode})
			continue
		}
		build = append(build, m)
	}
	built, errs := d.cache.Modules(build, root)
	return append(mods, built...), errs
}

// rootOf is "" when pid's root directory is probee's, /proc/PID/root
// otherwise (a container).
func rootOf(pid int) string {
	root := fmt.Sprintf("/proc/%d/root", pid)
	a, err := os.Stat(root)
	if err != nil {
		return root
	}
	b, err := os.Stat("/")
	if err != nil || !os.SameFile(a, b) {
		return root
	}
	return ""
}

// isGo reports whether the file at path was linked by Go (remembered per
// path).
func (d *dwarfTables) isGo(path string) bool {
	d.mu.Lock()
	isGo, ok := d.goBins[path]
	d.mu.Unlock()
	if !ok {
		isGo = resolver.IsGoBinary(path)
		d.mu.Lock()
		d.goBins[path] = isGo
		d.mu.Unlock()
	}
	return isGo
}
