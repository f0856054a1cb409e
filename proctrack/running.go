package proctrack

import (
	"os"
	"strconv"
	"time"
)

// ReadRunning reads the mappings of every process running now and hands
// them to the mapping history (History.Prime): a system-wide run's view of the
// processes that started before it, as perf synthesizes at its start.
// Without it, a process first heard of as it exits (its notice handled
// once it is gone) had bare addresses, and the children it forks nothing
// to start from. Call it once mapping records are watched (a process that
// execs after its read is then known from the exec's records) and before
// the probes are attached: a process that exits at once is read by then.
// It takes about 0.2 ms per process.
func (t *Tracker) ReadRunning() {
	start := time.Now()
	pids := t.proc.pids()
	n := 0
	for _, pid := range pids {
		if read, err := t.proc.readMaps(pid); err == nil {
			t.hist.Prime(pid, read.maps, read.comm)
			n++
		}
	}
	t.debugf("read the mappings of %d running processes in %v", n, time.Since(start).Round(time.Millisecond))
}

// pids lists the processes in /proc, in its order.
func (p procFS) pids() []int {
	ents, _ := os.ReadDir(p.path("/proc"))
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}
