package bpf

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// KernelFS is a pseudo file system that some specs read: tracefs (the
// tracepoint list and ids, available_filter_functions) and debugfs (the
// kprobe blacklist). probee's own machinery needs neither: its lifecycle
// hooks are BTF tracepoints and uprobes attach through the uprobe PMU.
type KernelFS struct {
	Name  string // "tracefs"
	Dir   string // where it is mounted when missing
	Magic int64  // statfs f_type of a mounted instance
	Also  string // another place it counts as mounted ("" if none)
}

var (
	// Tracefs is the tracing file system, at its place since Linux 4.1.
	Tracefs = KernelFS{"tracefs", "/sys/kernel/tracing", unix.TRACEFS_MAGIC, "/sys/kernel/debug/tracing"}
	// Debugfs holds the kprobe blacklist (kprobes/blacklist).
	Debugfs = KernelFS{"debugfs", "/sys/kernel/debug", unix.DEBUGFS_MAGIC, ""}
)

// Mounted reports whether fs is mounted at its place (or its other place).
func (fs KernelFS) Mounted() bool {
	return isMount(fs.Dir, fs.Magic) || (fs.Also != "" && isMount(fs.Also, fs.Magic))
}

func isMount(dir string, magic int64) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == magic
}

// MountCommand is the command a user runs to mount fs by hand.
func (fs KernelFS) MountCommand() string {
	return fmt.Sprintf("mount -t %s %s %s", fs.Name, fs.Name, fs.Dir)
}

// Ensure mounts fs at fs.Dir when it is not mounted, as perf does, and
// reports whether it did. The mount is left in place for the next run (and
// other tools), as perf leaves it. The error names the command to run.
func (fs KernelFS) Ensure() (mounted bool, err error) {
	if fs.Mounted() {
		return false, nil
	}
	if os.Geteuid() != 0 {
		return false, fmt.Errorf("%s is not mounted and only root can mount it: run '%s' as root", fs.Name, fs.MountCommand())
	}
	if err := unix.Mount(fs.Name, fs.Dir, fs.Name, 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
		return false, fmt.Errorf("%s is not mounted and mounting it failed (%w): run '%s'", fs.Name, err, fs.MountCommand())
	}
	if !fs.Mounted() {
		return false, fmt.Errorf("%s is not mounted at %s after mounting it: run '%s'", fs.Name, fs.Dir, fs.MountCommand())
	}
	return true, nil
}
