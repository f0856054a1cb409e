// Package container says which container a process runs in, for
// --group-by container: its cgroup path, read from /proc/PID/cgroup, and
// the container id that container runtimes put in that path (Docker,
// containerd and Kubernetes' CRI, CRI-O, Podman), which is what people
// filter fleet profiles by. It only parses: the caller reads the file.
package container

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Info is where a process runs.
type Info struct {
	ID     string // the container's id (64 hex digits); "" when its cgroup path names none
	Cgroup string // the process's cgroup path ("/" is the root cgroup); "" when unknown
}

// Frame is the root frame --group-by container gives the process's
// stacks: "[container ID]" with the id's first 12 digits (as docker ps
// shows it), else "[cgroup PATH]"; "" when nothing is known.
func (i Info) Frame() string {
	switch {
	case i.ID != "":
		return "[container " + i.ID[:12] + "]"
	case i.Cgroup != "":
		return "[cgroup " + i.Cgroup + "]"
	}
	return ""
}

// Read reads and parses a /proc/PID/cgroup file.
func Read(path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	return Parse(f)
}

// Parse parses the text of /proc/PID/cgroup: "ID:CONTROLLERS:PATH" lines,
// "0::PATH" being the unified (v2) hierarchy. The cgroup path is the
// unified one, or on hosts that keep v1 hierarchies beside it (where it
// stays "/") the name=systemd one, else the first other that is not the
// root. The id is the innermost container id in that path, else in any
// other. Malformed lines are an error naming the line.
func Parse(r io.Reader) (Info, error) {
	var unified, systemd, others []string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[0] == "" || !strings.HasPrefix(f[2], "/") {
			return Info{}, fmt.Errorf("cgroup line %d %q: want ID:CONTROLLERS:/PATH", n, line)
		}
		switch {
		case f[0] == "0" && f[1] == "":
			unified = append(unified, f[2])
		case f[1] == "name=systemd":
			systemd = append(systemd, f[2])
		default:
			others = append(others, f[2])
		}
	}
	if err := sc.Err(); err != nil {
		return Info{}, err
	}
	return infoOf(append(append(unified, systemd...), others...)), nil
}

// infoOf picks the cgroup path (the first not the root, else "/") and the
// id from paths, in order of preference.
func infoOf(paths []string) Info {
	var info Info
	for _, p := range paths {
		if info.Cgroup == "" && p != "/" {
			info.Cgroup = p
		}
		if info.ID == "" {
			info.ID = IDOf(p)
		}
	}
	if id := IDOf(info.Cgroup); id != "" {
		info.ID = id
	}
	if info.Cgroup == "" && len(paths) > 0 {
		info.Cgroup = "/"
	}
	return info
}

// IDOf returns the innermost container id in a cgroup path: a path
// element of 64 hex digits, alone (/docker/ID, /kubepods/.../ID) or after
// the runtime's prefix in a systemd scope (docker-ID.scope,
// cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope); "" when there
// is none.
func IDOf(path string) string {
	elems := strings.Split(path, "/")
	for i := len(elems) - 1; i >= 0; i-- {
		e := strings.TrimSuffix(elems[i], ".scope")
		if j := strings.LastIndexByte(e, '-'); j >= 0 {
			e = e[j+1:]
		}
		if isID(e) {
			return e
		}
	}
	return ""
}

func isID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
