package proctrack

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
)

// fileLoader loads, system-wide, the unwind table of every file the machine
// maps as code for the first time (the mapping records cover every
// process), so that the kernel finds it by the file's identity for any
// process that maps it: the second `ls` of a shell loop, every forked
// child, a process probee never registered. Loading runs in its own
// goroutine: the record reader never waits for a table.
//
// A table refused for want of room (wire.ErrTablesFull) is offered again
// at each sweep of the tables (retry): the kernel side tries it once
// released tables have left room it may fit in.
type fileLoader struct {
	d       *tables
	mu      sync.Mutex
	seen    map[fileID]bool
	refused map[fileID]loadReq // files whose table did not fit, the last mapping that asked
	queue   chan loadReq
	done    chan struct{}
}

type fileID struct {
	dev string
	ino uint64
}

type loadReq struct {
	pid int
	m   procmaps.Mapping
}

func newFileLoader(d *tables) *fileLoader {
	l := &fileLoader{d: d, seen: map[fileID]bool{}, refused: map[fileID]loadReq{}, queue: make(chan loadReq, 1024), done: make(chan struct{})}
	go l.run(l.queue) // not l.queue read later: close sets it to nil
	return l
}

// note queues the file of a new executable mapping unless it was seen.
func (l *fileLoader) note(ev wire.MmapEvent) {
	if ev.Exec || ev.Ino == 0 || !filepath.IsAbs(ev.Path) {
		return
	}
	id := fileID{ev.Dev, ev.Ino}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[id] || l.queue == nil {
		return
	}
	select {
	case l.queue <- loadReq{ev.PID, mappingOf(ev)}:
		l.seen[id] = true
	default: // a burst: a later mapping of the file queues it again
	}
}

// forget lets file id be loaded again: the kernel side forgot it.
func (l *fileLoader) forget(id fileID) {
	l.mu.Lock()
	delete(l.seen, id)
	delete(l.refused, id)
	l.mu.Unlock()
}

// retry queues the files whose table was refused again (as many as the
// queue takes).
func (l *fileLoader) retry() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.refused {
		if l.queue == nil {
			return
		}
		select {
		case l.queue <- r:
		default:
			return
		}
	}
}

// refusal notes whether r's table was refused for want of room.
func (l *fileLoader) refusal(r loadReq, refused bool) {
	id := fileID{r.m.Dev, r.m.Inode}
	l.mu.Lock()
	if refused {
		l.refused[id] = r
	} else {
		delete(l.refused, id)
	}
	l.mu.Unlock()
}

// close ends the loading goroutine once the queued files are loaded; a
// later note is dropped.
func (l *fileLoader) close() {
	l.mu.Lock()
	if l.queue != nil {
		close(l.queue)
		l.queue = nil
	}
	l.mu.Unlock()
	<-l.done
}

func (l *fileLoader) run(queue <-chan loadReq) {
	defer close(l.done)
	for r := range queue {
		l.load(r)
	}
}

// load gives the kernel the table of the file r maps, opened by a path
// that names that very file (procmaps.File): the process's view while it
// lives, probee's own once it is gone. A file no path opens any more (a
// build replaced since, in a container that exited) is not loaded.
func (l *fileLoader) load(r loadReq) {
	t := l.d.t
	mods, errs := l.d.modules(r.pid, []procmaps.Mapping{r.m})
	l.d.tableErrors(errs)
	if len(mods) == 0 {
		return
	}
	err := t.k.SetFileModules(mods)
	l.refusal(r, errors.Is(err, wire.ErrTablesFull))
	switch {
	case errors.Is(err, wire.ErrTablesStillFull):
	case errors.Is(err, wire.ErrTablesFull):
		// Past --unwind-budget: said once per refusal, then walked with
		// frame pointers until room frees (retry).
		t.warnf("unwind tables: %v", err)
	case err != nil:
		t.debugf("unwind tables: %v", err)
	}
}
