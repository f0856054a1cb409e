package proctrack

import (
	"sync"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/container"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// Kernel is the kernel side process tracking drives. *bpf.Session
// implements it; tests pass a fake that records the calls.
type Kernel interface {
	// AddPID puts a process in the kernel's pid filter (its children
	// follow it there).
	AddPID(pid int) error
	// RemovePID takes a process out of the kernel's pid filter.
	RemovePID(pid int) error
	// SetProcessModules replaces pid's executable mappings and their
	// unwind tables.
	SetProcessModules(pid int, mods []unwind.Module) error
	// SetFileModules loads the tables of files the kernel finds by file
	// identity in any process.
	SetFileModules(mods []unwind.Module) error
	// FindsTablesByFile reports whether the kernel uses SetFileModules'
	// tables (bpf_find_vma).
	FindsTablesByFile() bool
	// ForgetFiles lets go of what the kernel has of files no tracked
	// process maps any more (evict.go).
	ForgetFiles(files []procmaps.FileKey) error
	// AttachLdsoGate stops processes each time the ld.so at path has mapped
	// new objects.
	AttachLdsoGate(path string, stateOff, stateAddr, rdebugAddr uint64) error
	// AttachRootGate stops traced processes that exec under another root
	// than probee's.
	AttachRootGate() error
	// Continue resumes the process a gate stopped (an EventGate notice).
	Continue(ev wire.ProcessEvent) error
	// AddStack counts the event of a stack the kernel handed over
	// unfinished, with its user stack finished here (leaf first).
	AddStack(d wire.DeferredStack, user []uint64, truncated bool)
}

// Config is what a Tracker drives and how.
type Config struct {
	Kernel Kernel
	// History is the processes' mapping history the Tracker keeps up to
	// date: the symbolizer names stacks from it (symbolize.Symbolizer's
	// History), the deferred stacks are finished with it. nil is a new
	// one under Root.
	History *History
	// Tables loads unwind tables (--unwind dwarf or auto); without it only
	// the mapping history is kept (--unwind fp).
	Tables bool
	// GoByFramePointers gives Go binaries an empty table (--unwind auto):
	// Go on amd64 keeps frame pointers.
	GoByFramePointers bool
	// TableCache builds (or loads) the tables; nil: a new unwind.Cache
	// without a Store.
	TableCache *unwind.Cache
	// SystemWide is a run with neither -p nor -- CMD: when the kernel finds
	// tables by file, every file mapped as code gets its table.
	SystemWide bool
	// Containers remembers which container each process that produced
	// an event runs in (--group-by container; see Tracker.Container).
	Containers bool
	// Root is prefixed to /proc and to every file opened; "" is "/".
	Root string
	// Warnf and Debugf receive warnings and progress lines; nil discards.
	Warnf, Debugf func(format string, args ...any)
}

// Tracker follows the traced processes' lifecycle (see the package doc).
// Its methods are safe for concurrent use.
type Tracker struct {
	k      Kernel
	hist   *History
	proc   procFS
	warnf  func(format string, args ...any)
	debugf func(format string, args ...any)
	tables *tables     // nil: no unwind tables (--unwind fp)
	fin    *finisher   // deferred stacks; nil without tables
	ctrs   *containers // nil: not asked for (Config.Containers)
	wake   func()      // reads the mapping records now (SetRecordWake)

	gmu       sync.Mutex
	ldsoGated map[fileID]bool // ld.so files with the ld.so gate
}

// New returns a Tracker; with cfg.SystemWide and a kernel that finds tables
// by file, it starts loading the tables of mapped files at once.
func New(cfg Config) *Tracker {
	t := &Tracker{k: cfg.Kernel, hist: cfg.History, proc: procFS{cfg.Root},
		warnf: orDiscard(cfg.Warnf), debugf: orDiscard(cfg.Debugf), ldsoGated: map[fileID]bool{}}
	if t.hist == nil {
		t.hist = NewHistory(HistoryConfig{Root: cfg.Root})
	}
	if cfg.Containers {
		t.ctrs = &containers{proc: t.proc, of: map[int]container.Info{}}
	}
	if cfg.Tables {
		t.tables = newTables(t, cfg.TableCache, cfg.GoByFramePointers)
		t.fin = newFinisher(t)
		byFile := cfg.Kernel.FindsTablesByFile()
		if byFile {
			t.tables.loadVDSO()
		}
		// System-wide only: under -- CMD and -p the ld.so gate holds every
		// traced process that starts a program until its tables are loaded.
		if cfg.SystemWide && byFile {
			t.tables.files = newFileLoader(t.tables)
		}
	}
	return t
}

func orDiscard(f func(string, ...any)) func(string, ...any) {
	if f == nil {
		return func(string, ...any) {}
	}
	return f
}

// TracePID follows process pid, a target of the run: the -p process, or
// the -- CMD process stopped right after its exec, before its first
// instruction. It enters the kernel filter, gets the ld.so gate of its
// own root (a command is held there once ld.so has mapped its libraries,
// and either at every dlopen, until the new tables are loaded), and its
// tables are loaded and its symbols snapshotted: a command's program and
// ld.so are unwound in the kernel from their first instruction.
func (t *Tracker) TracePID(pid int) error {
	if err := t.k.AddPID(pid); err != nil {
		return err
	}
	t.traceFiltered(pid)
	return nil
}

// traceFiltered follows a target pid once it is in the kernel's filter.
func (t *Tracker) traceFiltered(pid int) {
	if t.tables != nil { // first: a dlopen from now on is held until its tables are loaded
		if err := t.attachPIDGate(pid); err != nil {
			t.warnf("%v", err)
		}
		t.attachRootGate()
	}
	t.newProcess(pid, 0)
}

// OnProcessEvent handles a kernel process notice: a process seen for the
// first time (with its parent), a gate stop, an exit.
func (t *Tracker) OnProcessEvent(ev wire.ProcessEvent) {
	switch {
	case ev.Type == wire.EventNewProcess:
		t.newProcess(ev.TGID, ev.PPID)
	case t.tables == nil: // no gates, no tables to drop
	case ev.Type == wire.EventGate:
		t.tables.gateStop(ev)
	case ev.Type == wire.EventExit:
		t.tables.exit(ev.TGID)
	}
}

// newProcess snapshots the mappings of a process that hit a probe for the
// first time (or of -p PID) and, with tables, loads its unwind tables: one
// read of /proc/PID/maps serves both. A process already gone (a
// short-lived forked child) is symbolized with its parent's mappings.
func (t *Tracker) newProcess(pid, ppid int) {
	if t.ctrs != nil {
		t.ctrs.seen(pid, ppid)
	}
	var read snapshot
	if t.tables != nil {
		read = t.tables.newProcess(pid)
	}
	if read.maps != nil {
		t.hist.SnapshotMaps(pid, read.maps, read.comm)
	} else {
		t.hist.Snapshot(pid)
	}
	if ppid != 0 {
		t.hist.Inherit(pid, ppid)
	}
}

// OnMmap handles a mapping record: a fork, an exec, or a new executable
// mapping. The mapping history records it, so that processes which exit
// before their maps are read still symbolize; with tables, a tracked process
// mapping new code is reloaded and, system-wide, a new file gets its table.
func (t *Tracker) OnMmap(ev wire.MmapEvent) {
	if ev.Fork {
		t.hist.Fork(ev.PID, ev.PPID, ev.Time)
		return
	}
	if t.tables != nil {
		t.tables.onMmap(ev)
	}
	if ev.Exec {
		t.hist.ExecReset(ev.PID, ev.Comm)
		if t.ctrs != nil {
			t.ctrs.exec(ev.PID)
		}
		return
	}
	t.hist.AddMapping(ev.PID, mappingOf(ev))
}

// OnMmapRead takes a mapping record as soon as it is read, before the
// records are put in order (bpf.MmapHandlers.Early). System-wide, a file
// mapped as code for the first time has its table loaded from here: the
// loader needs no order, and each millisecond saved is a millisecond of
// the file's first run unwound in the kernel rather than handed over.
func (t *Tracker) OnMmapRead(ev wire.MmapEvent) {
	if t.tables != nil && t.tables.files != nil {
		t.tables.files.note(ev)
	}
}

// SetRecordWake gives the tracker a way to have the mapping records read
// now (bpf.MmapWatcher.Kick): a stack handed over unfinished was taken in
// a file whose table is not loaded, and the records naming that file are
// made already. Call it before deferred stacks are handed over.
func (t *Tracker) SetRecordWake(wake func()) { t.wake = wake }

// mappingOf is the executable mapping a record reports.
func mappingOf(ev wire.MmapEvent) procmaps.Mapping {
	return procmaps.Mapping{Start: ev.Start, End: ev.End, Perms: "r-xp", Offset: ev.Pgoff, Dev: ev.Dev, Inode: ev.Ino, Path: ev.Path}
}

// OnDeferred takes a stack the kernel handed over unfinished (its walk
// reached a file whose table was not loaded yet); it is finished and
// counted a little later (see deferred.go) or by FinishDeferred.
func (t *Tracker) OnDeferred(d wire.DeferredStack) {
	if t.fin != nil {
		t.fin.add(d)
	}
	if t.wake != nil {
		t.wake()
	}
}

// FinishDeferred finishes and counts every stack still waiting; call it
// after the last deferred stacks and mapping records were handed over
// (the stacks need the mappings). Later stacks are not counted. It
// returns what became of the stacks handed over.
func (t *Tracker) FinishDeferred() DeferredStats {
	if t.fin == nil {
		return DeferredStats{}
	}
	return t.fin.flush()
}

// The mappings the kernel reports for processes that never hit a probe are
// forgotten every PruneEvery (the caller's ticker calls Prune), pruneGrace
// after their last record (see History.Prune): memory stays
// flat on a machine that starts hundreds of processes a second. The grace
// is long enough for a process notice queued behind a slow unwind-table
// load (seconds for the largest binaries) to be handled first.
const (
	PruneEvery = time.Second
	pruneGrace = 10 * time.Second
)

// Prune makes the mapping history forget exited processes that never hit
// a probe; it returns how many were forgotten.
func (t *Tracker) Prune() int {
	return t.hist.Prune(pruneGrace, t.proc.alive)
}

// Alive reports whether pid still exists (a zombie does).
func (t *Tracker) Alive(pid int) bool { return t.proc.alive(pid) }

// Forget drops what is kept of a process that exited for its stacks to
// be symbolized (its mapping history, its container), once the
// caller has symbolized the last of them: on long runs the processes
// that hit a probe are not kept to the end.
//
// A pid running again is another process's (the caller found the one it
// forgets gone a while ago): what is known of it is that process's, from
// its fork record or its first read on, and stays until that one goes.
func (t *Tracker) Forget(pid int) {
	if t.proc.alive(pid) {
		return
	}
	t.hist.Forget(pid)
	if t.ctrs != nil {
		t.ctrs.mu.Lock()
		delete(t.ctrs.of, pid)
		t.ctrs.mu.Unlock()
	}
}

// Stop ends table loading before the kernel session closes: it waits for
// the loads in progress and the files queued. Records handled afterwards
// still reach the mapping history. It is safe to call more than once.
func (t *Tracker) Stop() {
	if t.tables != nil {
		t.tables.stop()
	}
}
