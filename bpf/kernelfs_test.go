package bpf

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
	"golang.org/x/sys/unix"
)

func TestKernelFSMountCommand(t *testing.T) {
	if got := Tracefs.MountCommand(); got != "mount -t tracefs tracefs /sys/kernel/tracing" {
		t.Errorf("tracefs: %q", got)
	}
	if got := Debugfs.MountCommand(); got != "mount -t debugfs debugfs /sys/kernel/debug" {
		t.Errorf("debugfs: %q", got)
	}
}

// Ensure mounts once, then finds the mount; a directory that is not one
// is not taken for it. (A tmpfs on a temporary directory stands in for
// tracefs: the test must not change the machine's mounts.)
func TestKernelFSEnsure(t *testing.T) {
	testgate.Root(t)
	fs := KernelFS{Name: "tmpfs", Dir: t.TempDir(), Magic: unix.TMPFS_MAGIC}
	if fs.Mounted() {
		t.Fatalf("%s counts as mounted before the mount", fs.Dir)
	}
	mounted, err := fs.Ensure()
	if err != nil || !mounted {
		t.Fatalf("Ensure = %v, %v; want a mount", mounted, err)
	}
	t.Cleanup(func() { unix.Unmount(fs.Dir, 0) })
	if mounted, err := fs.Ensure(); err != nil || mounted {
		t.Errorf("second Ensure = %v, %v; want the existing mount", mounted, err)
	}
	bad := KernelFS{Name: "nosuchfs", Dir: t.TempDir(), Magic: 1}
	if _, err := bad.Ensure(); err == nil || !strings.Contains(err.Error(), "run 'mount -t nosuchfs nosuchfs "+bad.Dir+"'") {
		t.Errorf("failed mount: %v; want the command to run", err)
	}
}
