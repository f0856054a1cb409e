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
type fileLoader struct {
	d     *tables
	mu    sync.Mutex
	seen  map[fileID]bool
	queue chan loadReq
	done  chan struct{}
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
	l := &fileLoader{d: d, seen: map[fileID]bool{}, queue: make(chan loadReq, 1024), done: make(chan struct{})}
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
	if err := t.k.SetFileModules(mods); errors.Is(err, wire.ErrTablesFull) {
		// Past --unwind-budget: said once per file (the kernel side
		// refuses a table once), which is then walked with frame pointers.
		t.warnf("unwind tables: %v", err)
	} else if err != nil {
		t.debugf("unwind tables: %v", err)
	}
}
