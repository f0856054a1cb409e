package resolver

import (
	"fmt"

	"github.com/probee/probee/internal/safefile"
)

// pathInProcess turns the path of a spec given with -p into the file the
// process sees at that path: a path is relative to a process's root, and a
// process in a container (chroot, pivot_root) has another one than probee.
// In order:
//
//  1. a file the process maps whose path its maps show as p (either view
//     the kernel prints: the host's for a chroot, the container's for a
//     process in another mount namespace): the mapped file;
//  2. p under /proc/PID/root, resolved inside that root: the process's own
//     file (p itself when that is the same file, so names stay short);
//  3. p in probee's root, with a warning: the process cannot see it, but
//     it may be a library's host path the process maps later.
func (r *Resolver) pathInProcess(pid int, p string) (string, error) {
	if maps, err := r.readMaps(pid); err == nil {
		for _, m := range maps {
			if m.Exec() && m.Path == p {
				return r.mappedFile(pid, m)
			}
		}
	}
	own := r.rootPath(fmt.Sprintf("/proc/%d/root", pid)) + p
	ownInfo, ownErr := sameAs(own) // resolved inside that root
	hostInfo, hostErr := sameAs(r.rootPath(p))
	switch {
	case ownErr == nil && hostErr == nil && ownInfo == hostInfo:
		return r.rootPath(p), nil
	case ownErr == nil:
		return own, nil
	case hostErr == nil:
		r.warnf("pid %d has no %s in its root: probing the file at that path in probee's root", pid, p)
		return r.rootPath(p), nil
	}
	return "", fmt.Errorf("resolve %s: no such file in pid %d's root nor in probee's: give the path as the process sees it", p, pid)
}

// sameAs returns the device and inode of the regular file at path, opened
// as internal/safefile opens it.
func sameAs(path string) ([2]uint64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return [2]uint64{}, err
	}
	defer f.Close()
	return [2]uint64{f.Dev, f.Ino}, nil
}
