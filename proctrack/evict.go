package proctrack

import (
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
)

// Eviction: the unwind tables built in user space (unwind.Cache) and the
// Go binaries read (tables.goBins) are let go once no tracked process
// maps their file and no one asked for the table for tableIdle. A long
// system-wide run on a machine that keeps running new code (a build
// farm; the churn benchmark maps a program and a library never seen
// before every second) otherwise holds the table of every file it ever
// unwound: 17 MB after 10 minutes of churn, growing to --unwind-budget.
// The kernel side forgets the same files (Kernel.ForgetFiles): their
// file-identity entries, and their tables, whose storage later tables
// reuse (bpf/release.go), else the kernel's storage would fill up to
// --unwind-budget the same way and refuse every new binary's table. A
// file mapped again later gets its table anew, as a new file does: the
// system-wide loader (files.go) loads it again.

const (
	// tablesSweepEvery is how often exits trigger a sweep.
	tablesSweepEvery = 10 * time.Second
	// tableIdle is how long a table nobody maps is kept after its last
	// use: a stack handed over by the kernel for a process just gone is
	// finished within finishDelay, far less.
	tableIdle = 30 * time.Second
)

// maybeSweep sweeps when the last sweep is tablesSweepEvery old.
func (d *tables) maybeSweep(now time.Time) {
	d.mu.Lock()
	due := now.Sub(d.swept) >= tablesSweepEvery
	if due {
		d.swept = now
	}
	d.mu.Unlock()
	if due {
		d.sweep()
	}
}

// sweep lets go of the tables and Go binaries of the files no tracked
// process maps, and has the kernel side forget those files; it returns
// how many tables it let go.
func (d *tables) sweep() int {
	mapped := d.mappedFiles()
	var gone []procmaps.FileKey
	d.mu.Lock()
	for id, gb := range d.goBins {
		if !mapped[id] {
			delete(d.goBins, id)
			if gb != nil { // a Go binary: the cache has no table of it
				gone = append(gone, procmaps.FileKey{Dev: id.dev, Ino: id.ino})
			}
		}
	}
	d.mu.Unlock()
	n := d.cache.Evict(func(id fileid.ID) bool {
		f := procmaps.FileKey{Dev: procmaps.StatDev(id.Dev), Ino: id.Ino}
		if mapped[fileID{f.Dev, f.Ino}] {
			return true
		}
		gone = append(gone, f) // its table is let go
		return false
	}, d.idle)
	d.forget(gone)
	if d.files != nil {
		d.files.retry() // the kernel side may have room for them now
	}
	return n
}

// forget has the kernel side forget files let go, and the system-wide
// loader load them again when they are mapped again.
func (d *tables) forget(files []procmaps.FileKey) {
	if len(files) == 0 {
		return
	}
	d.loadMu.Lock() // as a load: not once the session is going away (stop)
	defer d.loadMu.Unlock()
	if d.closed {
		return
	}
	if d.files != nil {
		for _, f := range files {
			d.files.forget(fileID{f.Dev, f.Ino})
		}
	}
	if err := d.t.k.ForgetFiles(files); err != nil {
		d.t.debugf("unwind tables: %v", err)
	}
}

// mappedFiles is the set of files the tracked processes map.
func (d *tables) mappedFiles() map[fileID]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	mapped := map[fileID]bool{}
	for _, maps := range d.procs {
		for _, m := range maps {
			mapped[fileID{m.Dev, m.Inode}] = true
		}
	}
	return mapped
}
