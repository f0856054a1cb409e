package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/testgate"
)

// forkStack is the one stack of fork-nofp's f_leaf, in the parent and in
// every forked child.
const forkStack = "fork-nofp;_start;__libc_start_main;__libc_start_call_main;main;f_work;f_mid;f_leaf"

// checkForkStacks wants all calls (children+1)*n under forkStack, named,
// in the collapsed file out and no partial stacks.
func checkForkStacks(t *testing.T, label, out, stderr string, calls uint64) {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	st := folded(t, string(b))
	if got := st[label+";"+forkStack]; got != calls || total(st) != calls {
		t.Errorf("%d of %d calls complete (%d in all); stacks:\n%s", got, calls, total(st), b)
	}
	if strings.Contains(stderr, "partial stacks") {
		t.Errorf("partial stacks reported")
	}
}

// Forked children are unwound like their parent from their first event
// (issue 15): no table load, no stop, no user-space round trip. A private
// copy of the fixture keeps other tests' runs of it out of the system-wide
// case.
func TestForks(t *testing.T) {
	testgate.Root(t)
	bin := testgate.PrivateFixture(t, filepath.Join(filepath.Dir(fixture(t, "fork-nofp")), "fork-nofp"))
	label := bin + ":f_leaf"
	const calls = 5 * 1000
	t.Run("command", func(t *testing.T) {
		dir := t.TempDir()
		r := run(t, dir, "--uprobe", label, "-o", "out.folded", "--", bin, "4", "1000")
		if r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		checkForkStacks(t, label, filepath.Join(dir, "out.folded"), r.stderr, calls)
	})
	t.Run("pid", func(t *testing.T) {
		dir := t.TempDir()
		target := exec.Command(bin, "4", "1000", "wait")
		if err := target.Start(); err != nil {
			t.Fatal(err)
		}
		go target.Wait() // reaped at once: probee -p waits for the pid to go
		b := start(t, dir, "--uprobe", label, "-o", "out.folded", "-p", strconv.Itoa(target.Process.Pid))
		b.waitFor(t, "attached", 30*time.Second)
		target.Process.Signal(syscall.SIGUSR1)
		b.wait(t, 30*time.Second)
		checkForkStacks(t, label, filepath.Join(dir, "out.folded"), b.stderr(), calls)
	})
	// System-wide, the program started after probee: a first run that
	// calls nothing makes the binary known (probee loads the table of
	// every file the machine maps for the first time); from then on every
	// new process of it, and every child it forks, unwinds completely from
	// its first event with no registration (bpf_find_vma and the file's
	// identity).
	t.Run("system-wide", func(t *testing.T) {
		if !bpf.HaveFindVMA() {
			testgate.Missing(t, "bpf_find_vma", "kernels before 5.17 register processes one by one")
		}
		dir := t.TempDir()
		b := start(t, dir, "--uprobe", label, "-o", "out.folded")
		b.waitFor(t, "attached", 30*time.Second)
		for _, args := range [][]string{{"0", "0"}, {"4", "1000"}} {
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v %s", bin, err, out)
			}
			time.Sleep(300 * time.Millisecond) // the mmap records, then the table load
		}
		b.cmd.Process.Signal(syscall.SIGINT)
		b.wait(t, 30*time.Second)
		checkForkStacks(t, label, filepath.Join(dir, "out.folded"), b.stderr(), calls)
	})
}
