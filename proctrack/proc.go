package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/probee/probee/internal/procmaps"
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

// readMaps reads /proc/PID/maps.
func (p procFS) readMaps(pid int) ([]Mapping, error) {
	ms, err := procmaps.Read(p.pidPath(pid, "maps"))
	if err != nil {
		return nil, fmt.Errorf("read mappings of pid %d: %w (is the process still running?)", pid, err)
	}
	return ms, nil
}

// rootOf is the root pid's files are opened under: probee's own when pid
// shares it, /proc/PID/root otherwise (a container, or a process gone).
func (p procFS) rootOf(pid int) string {
	root := p.pidPath(pid, "root")
	a, err := os.Stat(root)
	if err != nil {
		return root
	}
	b, err := os.Stat(p.path("/"))
	if err != nil || !os.SameFile(a, b) {
		return root
	}
	return p.root
}

// alive reports whether pid still exists (a zombie does).
func (p procFS) alive(pid int) bool {
	_, err := os.Stat(p.pidPath(pid, ""))
	return err == nil
}

// mappedRoot finds the root under which m's path names the very file the
// kernel mapped (same device and inode): the process's root while it
// lives, probee's own once it is gone. A file that is not the mapped one
// (another build in a container that exited) is not found.
func (p procFS) mappedRoot(pid int, m Mapping) (string, error) {
	for _, root := range []string{p.rootOf(pid), p.root} {
		fi, err := os.Stat(filepath.Join(root, m.Path))
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && st.Ino == m.Inode && devName(st.Dev) == m.Dev {
			return root, nil
		}
	}
	return "", fmt.Errorf("the mapped file (device %s, inode %d) is not at that path any more", m.Dev, m.Inode)
}
