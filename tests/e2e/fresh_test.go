package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// freshShell unmounts tracefs and debugfs in the private mount namespace
// that unshare(1) makes, then runs probee: a machine where nothing was
// mounted by hand. The host keeps its mounts.
const freshShell = `umount -R /sys/kernel/debug 2>/dev/null; umount /sys/kernel/tracing 2>/dev/null
if grep -qE ' - (tracefs|debugfs) ' /proc/self/mountinfo; then echo "still mounted" >&2; exit 99; fi
exec "$@"`

// runFresh runs probee with args on a "fresh machine" (freshShell).
func runFresh(t *testing.T, dir string, args ...string) result {
	t.Helper()
	argv := append([]string{"-m", "--propagation", "private", "sh", "-c", freshShell, "sh", probee}, args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Dir = dir
	r := runCmd(t, cmd)
	if r.code == 99 {
		t.Fatalf("could not unmount tracefs/debugfs in a private namespace: %s", r.stderr)
	}
	t.Logf("(fresh) probee %s\nexit %d\nstderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	return r
}

// kernelMounts is the machine's tracefs and debugfs mounts.
func kernelMounts(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " - tracefs ") || strings.Contains(l, " - debugfs ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// On a machine with nothing mounted (issue 13), probee's own machinery
// needs no tracefs (the README's first command says nothing about mounts);
// what needs tracefs mounts it once and says so; the host's mounts are
// left as they were.
func TestFreshMachine(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	before := kernelMounts(t)
	const note = "tracefs was not mounted: mounted it at /sys/kernel/tracing"
	t.Run("readme", func(t *testing.T) {
		r := runFresh(t, t.TempDir(), "--uprobe", chain+":leaf", "--", chain, "1000")
		st := folded(t, r.stdout)
		if r.code != 0 || st[chain+":leaf;chain-fp;_start;__libc_start_main;__libc_start_call_main;main;a;b;c;leaf"] != 1000 {
			t.Errorf("exit %d, stacks %v", r.code, st)
		}
		if strings.Contains(r.stderr, "mounted") {
			t.Errorf("a uprobe run mentions mounts: %s", r.stderr)
		}
	})
	t.Run("tracepoint", func(t *testing.T) {
		r := runFresh(t, t.TempDir(), "--tracepoint", "syscalls:sys_enter_openat", "--", "cat", "/etc/hostname")
		if r.code != 0 || strings.Count(r.stderr, note) != 1 || !strings.Contains(r.stdout, "syscalls:sys_enter_openat;cat;") {
			t.Errorf("exit %d, want the mount note once and cat's openat stacks; stdout:\n%s", r.code, r.stdout)
		}
		r = runFresh(t, t.TempDir(), "--tracepoint", "syscalls:sys_enter_openat", "-d", "1s", "-o", "out.folded")
		if r.code != 0 || strings.Count(r.stderr, note) != 1 {
			t.Errorf("-d 1s: exit %d", r.code)
		}
	})
	t.Run("list", func(t *testing.T) {
		r := runFresh(t, t.TempDir(), "--list-probes", "tracepoint:sched:sched_switch")
		if r.code != 0 || r.stdout != "tracepoint:sched:sched_switch\n" || strings.Count(r.stderr, note) != 1 {
			t.Errorf("exit %d, stdout %q", r.code, r.stdout)
		}
		r = runFresh(t, t.TempDir(), "--list-probes", "tracepoint:syscalls:sys_enter_open*")
		if r.code != 0 || strings.Count(r.stdout, "\n") < 2 {
			t.Errorf("exit %d, stdout %q", r.code, r.stdout)
		}
		// Kernel functions list without kprobes in the kernel (from
		// available_filter_functions or kallsyms).
		r = runFresh(t, t.TempDir(), "--list-probes", "kprobe:vfs_*")
		if r.code != 0 || !strings.Contains(r.stdout, "kprobe:vfs_read\n") {
			t.Errorf("exit %d, stdout %.300q", r.code, r.stdout)
		}
	})
	if after := kernelMounts(t); after != before {
		t.Errorf("the machine's tracefs/debugfs mounts changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
