package main

import (
	"fmt"
	"sync"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/resolver"
	"github.com/probee/probee/unwind"
)

// dwarfTables keeps the kernel's unwind mappings of traced processes up to
// date: tables for -p and -- CMD targets at start (the command is held at
// its entry point by the exec gate until they are loaded), lazily for other
// processes on their first event, and on every new executable mapping
// (dlopen) from the mmap watcher.
type dwarfTables struct {
	t      *tracer
	cache  *unwind.Cache
	loadMu sync.Mutex // serializes loadProcess
	mu     sync.Mutex
	procs  map[int][]unwind.Mapping // tracked tgids and their executable mappings
	goBins map[string]bool          // path -> linked by Go (see framePointersForGo)
}

func (t *tracer) dwarfOn() bool { return t.cfg.unwind != "fp" }

func newDwarfTables(t *tracer) *dwarfTables {
	return &dwarfTables{t: t, cache: unwind.NewCache(), procs: map[int][]unwind.Mapping{}, goBins: map[string]bool{}}
}

// loadProcess reads pid's mappings from /proc and loads their tables. It is
// called from the event and the mmap goroutines; reading and pushing under
// one lock makes the last push the freshest read (an older, partial read
// pushed after the exec gate's full one would cut stacks).
func (d *dwarfTables) loadProcess(pid int) {
	d.loadMu.Lock()
	defer d.loadMu.Unlock()
	maps, err := unwind.ReadMaps(pid)
	if err != nil {
		d.t.status.debugf("unwind tables of pid %d: %v", pid, err)
		return
	}
	var exec []unwind.Mapping
	for _, m := range maps {
		if m.Exec() {
			exec = append(exec, m)
		}
	}
	d.mu.Lock()
	d.procs[pid] = exec
	d.mu.Unlock()
	d.push(pid, exec)
}

// push resolves the mappings' tables and writes them to the kernel.
func (d *dwarfTables) push(pid int, maps []unwind.Mapping) {
	mods, errs := d.cache.Modules(maps, fmt.Sprintf("/proc/%d/root", pid))
	for _, err := range errs {
		d.t.status.debugf("unwind table: %v", err)
	}
	if d.t.cfg.unwind == "auto" {
		d.framePointersForGo(mods)
	}
	if err := d.t.sess.SetProcessModules(pid, mods); err != nil {
		d.t.status.warnf("unwind tables of pid %d: %v", pid, err)
	}
}

// track starts following pid's mappings (from the mmap watcher) before it
// has any: a command about to exec.
func (d *dwarfTables) track(pid int) {
	d.mu.Lock()
	if _, ok := d.procs[pid]; !ok {
		d.procs[pid] = nil
	}
	d.mu.Unlock()
}

// onEvent handles the kernel's process notices.
func (d *dwarfTables) onEvent(ev bpf.ProcessEvent) {
	switch ev.Type {
	case bpf.EventGate:
		d.loadProcess(ev.TGID)
		if err := bpf.Continue(ev.TGID); err != nil {
			d.t.status.warnf("%v", err)
		}
	case bpf.EventNewProcess:
		d.mu.Lock()
		_, known := d.procs[ev.TGID]
		d.mu.Unlock()
		if !known {
			d.loadProcess(ev.TGID)
		}
	case bpf.EventExit:
		d.mu.Lock()
		delete(d.procs, ev.TGID)
		d.mu.Unlock()
	}
}

// onMmap reloads a tracked process's mappings when it maps new code
// (exec, dlopen). /proc/PID/maps is re-read rather than patched with the
// record: records arrive up to 10 ms late, and a list rebuilt from them
// would briefly lack mappings the exec gate already loaded.
func (d *dwarfTables) onMmap(ev bpf.MmapEvent) {
	if ev.Exec {
		return
	}
	d.mu.Lock()
	maps, ok := d.procs[ev.PID]
	d.mu.Unlock()
	if !ok {
		return
	}
	for _, m := range maps {
		if m.Start == ev.Start && m.End == ev.End && m.Path == ev.Path {
			return // already loaded
		}
	}
	d.loadProcess(ev.PID)
}

// attachGate holds a traced command at its ELF entry point until its tables
// are loaded. For a command that is not an ELF file (a script) the tables
// come from the mmap records instead, and its first stacks may be partial.
func (t *tracer) attachGate() {
	off, err := resolver.EntryFileOffset(t.cmd.path)
	if err == nil {
		err = t.sess.AttachGate(t.cmd.path, off)
	}
	if err != nil {
		t.status.warnf("exec gate: %v (the command's first stacks may be partial)", err)
	}
}

// framePointersForGo gives Go binaries an empty table under --unwind auto:
// Go on amd64 always keeps frame pointers, and its FP chains are complete
// where its CFI-based walk is not yet (see bpf/doc.go). --unwind dwarf
// still uses the tables.
func (d *dwarfTables) framePointersForGo(mods []unwind.Module) {
	for i := range mods {
		d.mu.Lock()
		isGo, ok := d.goBins[mods[i].Path]
		if !ok {
			isGo = resolver.IsGoBinary(mods[i].Path)
			d.goBins[mods[i].Path] = isGo
		}
		d.mu.Unlock()
		if isGo {
			mods[i].Table = &unwind.Table{}
		}
	}
}
