package proctrack

import (
	"fmt"
	"sync"

	"github.com/probee/probee/internal/container"
)

// containers remembers which container each process that produced an
// event runs in (--group-by container): read when the process is first
// seen, again after each of its execs (a runtime moves a process into the
// container's cgroup, then execs the container's program), and when asked
// while the process still runs; kept after it exits, for the outputs.
type containers struct {
	proc procFS
	mu   sync.Mutex
	of   map[int]container.Info
}

// read reads pid's container; an error for a process gone, or a zombie:
// an exited process's cgroup file shows the root cgroup, not the one it
// ran in (short-lived host processes were labeled "/", and a container's
// would be too). Its state is read after the file: a process reaped
// between the two reads may have been a zombie when the file was read.
func (c *containers) read(pid int) (container.Info, error) {
	info, err := container.Read(c.proc.pidPath(pid, "cgroup"))
	if err != nil {
		return container.Info{}, fmt.Errorf("read the container of pid %d: %w", pid, err)
	}
	if !c.proc.running(pid) {
		return container.Info{}, fmt.Errorf("pid %d has exited", pid)
	}
	return info, nil
}

// seen reads pid's container; a process that no longer runs (a
// short-lived child gone, or a zombie, before its notice) is in its
// kin's (ofKin).
func (c *containers) seen(pid, ppid int) {
	info, err := c.read(pid)
	if err != nil {
		info = c.ofKin(ppid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.of[pid] = info
}

// ofKin is the container of the nearest of ppid and its ancestors (the
// kin whose root a short-lived process's files are read from) that still
// runs, read now, or, for one that no longer does, as recorded when it
// ran: a container's shell that never hit a probe gives its short-lived
// children its container. Zero when none is known, never a zombie's "/".
func (c *containers) ofKin(ppid int) container.Info {
	for _, pid := range c.proc.ancestors(ppid, kinDepth) {
		if info, err := c.read(pid); err == nil {
			return info
		}
		if info := c.recorded(pid); info != (container.Info{}) {
			return info
		}
	}
	return container.Info{}
}

// recorded is what is known of pid's container.
func (c *containers) recorded(pid int) container.Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.of[pid]
}

// exec reads pid's container again after an exec, if pid was seen.
func (c *containers) exec(pid int) {
	c.mu.Lock()
	_, ok := c.of[pid]
	c.mu.Unlock()
	if ok {
		c.refresh(pid)
	}
}

// refresh reads pid's container if it still runs, and returns what is
// known.
func (c *containers) refresh(pid int) container.Info {
	info, err := c.read(pid)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.of[pid] = info
	}
	return c.of[pid]
}

// Container is the container process pid runs in (or ran in, when it
// exited): its id, else its cgroup path. Zero without Config.Containers,
// or for a process probee never heard of.
func (t *Tracker) Container(pid int) container.Info {
	if t.ctrs == nil {
		return container.Info{}
	}
	return t.ctrs.refresh(pid)
}
