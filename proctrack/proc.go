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
	maps []procmaps.Mapping
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

// running reports whether pid runs: its stat file reads and shows neither
// Z nor X. Read after another file of pid, it says whether that file was
// the running process's: a zombie's shows what it is no longer (its
// cgroup is "/"), and one reaped meanwhile may have been a zombie's.
func (p procFS) running(pid int) bool {
	st, err := procstat.Read(p.pidPath(pid, "stat"))
	return err == nil && !st.Exited()
}

// kinDepth is how many of a short-lived process's ancestors are its kin
// (ancestors): tried for its files' root and for its container.
const kinDepth = 3

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
