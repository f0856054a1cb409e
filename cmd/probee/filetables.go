package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/unwind"
	"golang.org/x/sys/unix"
)

// fileLoader loads, system-wide, the unwind table of every file the machine
// maps as code for the first time (the mmap watcher sees every process), so that the
// kernel finds it by the file's identity for any process that maps it:
// the second `ls` of a shell loop, every forked child, a process probee
// never registered (bpf file tables, kernels with bpf_find_vma). Loading
// runs in its own goroutine: the mmap reader never waits for a table.
type fileLoader struct {
	d     *dwarfTables
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
	m   unwind.Mapping
}

func newFileLoader(d *dwarfTables) *fileLoader {
	l := &fileLoader{d: d, seen: map[fileID]bool{}, queue: make(chan loadReq, 1024), done: make(chan struct{})}
	go l.run()
	return l
}

// note queues the file of a new executable mapping unless it was seen.
func (l *fileLoader) note(ev bpf.MmapEvent) {
	if ev.Exec || ev.Ino == 0 || !filepath.IsAbs(ev.Path) {
		return
	}
	id := fileID{ev.Dev, ev.Ino}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[id] || l.queue == nil {
		return
	}
	m := unwind.Mapping{Start: ev.Start, End: ev.End, Perms: "r-xp", Offset: ev.Pgoff, Dev: ev.Dev, Inode: ev.Ino, Path: ev.Path}
	select {
	case l.queue <- loadReq{ev.PID, m}:
		l.seen[id] = true
	default: // a burst: a later mapping of the file queues it again
	}
}

// close ends the loading goroutine once the queued files are loaded; no
// note may follow.
func (l *fileLoader) close() {
	l.mu.Lock()
	close(l.queue)
	l.queue = nil // note drops what comes later
	l.mu.Unlock()
	<-l.done
}

func (l *fileLoader) run() {
	defer close(l.done)
	for r := range l.queue {
		root, err := sameFile(r.pid, r.m)
		if err != nil {
			l.d.t.status.debugf("unwind table of %s: %v", r.m.Path, err)
			continue
		}
		mods, errs := l.d.modulesIn(root, []unwind.Mapping{r.m})
		for _, err := range errs {
			l.d.t.status.debugf("unwind table: %v", err)
		}
		if err := l.d.t.sess.SetFileModules(mods); err != nil {
			// Full maps: the file is walked with frame pointers, and the
			// final table summary says how much was loaded.
			l.d.t.status.debugf("unwind tables: %v", err)
		}
	}
}

// sameFile finds the root under which m's path names the very file the
// kernel mapped (same device and inode): the process's root while it
// lives, probee's own once it is gone. A file that is not the mapped one
// (another build in a container that exited) is not loaded.
func sameFile(pid int, m unwind.Mapping) (string, error) {
	for _, root := range []string{rootOf(pid), ""} {
		fi, err := os.Stat(filepath.Join(root, m.Path))
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && st.Ino == m.Inode && fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev)) == m.Dev {
			return root, nil
		}
	}
	return "", fmt.Errorf("the mapped file (device %s, inode %d) is not at that path any more", m.Dev, m.Inode)
}
