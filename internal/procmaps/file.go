package procmaps

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// File returns a path, under root ("" is /, tests pass a fake tree), that
// opens the file mapping m of process pid maps; the unwind tables, the
// symbols and the uprobes of a process's files all go through it.
//
// The path /proc/PID/maps shows cannot be opened as it is: the kernel
// prints it relative to the root of the process reading it (probee),
// unless the file is out of its reach, when it prints it relative to the
// root of the file's own mount namespace. So a process chrooted in
// probee's mount namespace shows host paths (/srv/ctr/usr/lib/libc.so.6),
// one in another mount namespace (pivot_root, a container runtime) shows
// its own (/usr/lib/libc.so.6), which on the host may name another build
// of the library. The kernel's mapping records (perf MMAP2) give the path
// relative to the mapping process's root instead. Hence no path is trusted
// by its name, only by the identity of what it opens, tried in order:
//
//  1. the path itself, when it names the mapped file (same device and
//     inode): the host path, which outlives the process;
//  2. the path under /proc/PID/root (the process's own view);
//  3. /proc/PID/map_files/START-END, which opens the mapped file itself
//     (deleted or replaced files, and files whose device probee cannot
//     see as the maps show it), while the process lives;
//  4. a path of 1 or 2 with the mapping's inode but not its device: stat
//     shows a btrfs subvolume's device where maps shows the file
//     system's, and an overlayfs file's where older kernels' maps show
//     the layer's. Used only once the process is gone.
//
// It fails when none of them opens the file (the process exited and the
// file is not in probee's view), and, before it touches any path, for a
// file on a FUSE file system another user serves (ErrUntrustedFUSE).
//
// kin are other processes whose root may hold the file, tried after
// pid's own root (2) where the path there is the mapped file itself: a
// short-lived process in a container has exited by the time its stacks
// are finished, and its living parent (or the parent's parent) sees the
// same root.
func File(root string, pid int, m Mapping, kin ...int) (string, error) {
	if !m.File() {
		return "", fmt.Errorf("mapping %#x-%#x is not a file (%q)", m.Start, m.End, m.Path)
	}
	if err := untrustedFUSE(root, pid, m); err != nil {
		return "", err
	}
	proc := fmt.Sprintf("/proc/%d", pid)
	inodeOnly := ""
	paths := []string{m.Path, proc + "/root" + m.Path}
	for _, k := range kin {
		if k > 0 && k != pid {
			paths = append(paths, fmt.Sprintf("/proc/%d/root%s", k, m.Path))
		}
	}
	for i, p := range paths {
		p = under(root, p)
		exact, inode := m.identity(p)
		if exact {
			return p, nil
		}
		if inode && inodeOnly == "" && i < 2 {
			inodeOnly = p
		}
	}
	mf := under(root, fmt.Sprintf("%s/map_files/%x-%x", proc, m.Start, m.End))
	if _, err := os.Stat(mf); err == nil {
		return mf, nil
	}
	if inodeOnly != "" {
		return inodeOnly, nil
	}
	return "", fmt.Errorf("%s (device %s, inode %d): the mapped file is not found: that path names another file or none, in probee's root and in pid %d's, and /proc/%d/map_files has no such mapping (has the process exited?)",
		m.Path, m.Dev, m.Inode, pid, pid)
}

// Shown reports whether m's path, as it is (under root), opens the mapped
// file: the host path of a process in probee's mount namespace. Such a
// path stays good after the process exits; others (a container's) do not.
func Shown(root string, m Mapping) bool {
	exact, _ := m.identity(under(root, m.Path))
	return m.File() && exact
}

// identity reports whether the file at path is m's file (exact: device and
// inode match) or has at least its inode.
func (m Mapping) identity(path string) (exact, inode bool) {
	fi, err := os.Stat(path)
	if err != nil || m.Inode == 0 {
		return false, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Ino != m.Inode {
		return false, false
	}
	return StatDev(st.Dev) == m.Dev, true
}

// StatDev is a stat device number as /proc/PID/maps prints it ("fd:01").
func StatDev(dev uint64) string {
	return DevName(unix.Major(dev), unix.Minor(dev))
}

func under(root, p string) string {
	if root == "" {
		return p
	}
	return filepath.Join(root, p)
}
