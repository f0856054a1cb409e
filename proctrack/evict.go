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
// The kernel keeps its copy (bpf knows a table by its file version), so
// a file mapped again later is unwound at once; only the deferred-stack
// finisher (deferred.go) builds its table again, when it needs it.

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
// process maps; it returns how many tables it let go.
func (d *tables) sweep() int {
	mapped := d.mappedFiles()
	d.mu.Lock()
	for id := range d.goBins {
		if !mapped[id] {
			delete(d.goBins, id)
		}
	}
	d.mu.Unlock()
	return d.cache.Evict(func(id fileid.ID) bool {
		return mapped[fileID{procmaps.StatDev(id.Dev), id.Ino}]
	}, d.idle)
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
