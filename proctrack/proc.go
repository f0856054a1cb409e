package proctrack

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/procstat"
)

// procFS is the file system processes are read from: /proc and the files
// they map, under root ("" is "/"; tests use a fake tree).
type procFS struct{ root string }

// path is name under the root (name itself with the real root).
func (p procFS) path(name string) string {
	if p.root == "" {
		return name
	}
	return filepath.Join(p.root, name)
}

// pidPath is /proc/PID/name under the root.
func (p procFS) pidPath(pid int, name string) string {
	return p.path(fmt.Sprintf("/proc/%d/%s", pid, name))
}

// snapshot is one read of a process's mappings and the comm they go with.
type snapshot struct {
	maps []Mapping
	comm string // "" when an exec kept changing it (procmaps.ReadProcess)
}

// readMaps reads /proc/PID/maps and comm.
func (p procFS) readMaps(pid int) (snapshot, error) {
	ms, comm, err := procmaps.ReadProcess(p.pidPath(pid, ""))
	if err != nil {
		return snapshot{}, fmt.Errorf("read mappings of pid %d: %w (is the process still running?)", pid, err)
	}
	return snapshot{ms, comm}, nil
}

// zombie reports whether pid has exited and waits to be reaped (state Z,
// or X): what /proc shows of it then (its cgroup is "/") is no longer
// what it was. A stat file that cannot be read says nothing.
func (p procFS) zombie(pid int) bool {
	st, err := procstat.Read(p.pidPath(pid, "stat"))
	return err == nil && st.Exited()
}

// ancestors returns pid and up to n-1 of its living ancestors, parent
// first, stopping below init: the processes whose root a short-lived
// child most likely shared (procmaps.File's kin).
func (p procFS) ancestors(pid, n int) []int {
	var out []int
	for pid > 1 && len(out) < n {
		out = append(out, pid)
		st, err := procstat.Read(p.pidPath(pid, "stat"))
		if err != nil {
			break
		}
		pid = st.PPID
	}
	return out
}

// alive reports whether pid still exists (a zombie does).
func (p procFS) alive(pid int) bool {
	_, err := os.Stat(p.pidPath(pid, ""))
	return err == nil
}
