package e2e

import (
	"fmt"
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
	// System-wide, the program started after probee, a binary the machine
	// never ran before (a private copy): its first events reach a file
	// whose table is not loaded, so the kernel hands them over with a copy
	// of the stack and probee finishes them once the table is built; the
	// children it forks and later events unwind in the kernel through the
	// file's identity (bpf_find_vma). No registration, no stop.
	t.Run("system-wide", func(t *testing.T) {
		if !bpf.HaveFindVMA() {
			testgate.Missing(t, "bpf_find_vma", "kernels before 5.17 register processes one by one")
		}
		dir := t.TempDir()
		b := start(t, dir, "--uprobe", label, "-o", "out.folded")
		b.waitFor(t, "attached", 30*time.Second)
		if out, err := exec.Command(bin, "4", "1000").CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", bin, err, out)
		}
		b.cmd.Process.Signal(syscall.SIGINT)
		b.wait(t, 30*time.Second)
		checkForkStacks(t, label, filepath.Join(dir, "out.folded"), b.stderr(), calls)
	})
}

// A shell loop of 200 subshells, each calling getpid in a forked bash
// (bash's own make_child, and $BASHPID): every stack is unwound to
// _start, none is partial or truncated.
func TestShellSubshells(t *testing.T) {
	testgate.Root(t)
	r := run(t, t.TempDir(), "--uprobe", "libc:getpid", "--",
		"bash", "-c", "for i in $(seq 200); do ( echo $BASHPID >/dev/null ); done")
	st := folded(t, r.stdout)
	var toStart uint64
	for s, n := range st {
		if strings.Contains(s, "[truncated]") {
			t.Errorf("truncated: %s (%d)", s, n)
		}
		if strings.Contains(s, ";_start;") {
			toStart += n
		}
	}
	if r.code != 0 || total(st) < 400 || strings.Contains(r.stderr, "partial stacks") {
		t.Errorf("exit %d, %d calls (want >= 400: two per subshell), partial stacks reported: %v",
			r.code, total(st), strings.Contains(r.stderr, "partial stacks"))
	}
	// The $(seq 200) subshell calls getpid as bash, then execs seq: that
	// stack is named from the mappings it had under the comm "bash".
	if toStart != total(st) {
		t.Errorf("%d of %d stacks named down to _start, want all:\n%s", toStart, total(st), r.stdout)
	}
}

// System-wide, a process that execs a binary probee knows is unwound
// completely from the new image's first event: the exec drops its old
// mapping array in the kernel, and the file's table serves at once.
func TestExecKnownBinary(t *testing.T) {
	testgate.Root(t)
	if !bpf.HaveFindVMA() {
		testgate.Missing(t, "bpf_find_vma", "kernels before 5.17 register processes one by one")
	}
	bin := testgate.PrivateFixture(t, fixture(t, "chain-nofp"))
	label := bin + ":leaf"
	dir := t.TempDir()
	b := start(t, dir, "--uprobe", label, "-o", "out.folded")
	b.waitFor(t, "attached", 30*time.Second)
	for _, script := range []string{bin + " 0", "exec " + bin + " 100"} {
		if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", script, err, out)
		}
		time.Sleep(300 * time.Millisecond) // the mmap records, then the table load
	}
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 30*time.Second)
	data, err := os.ReadFile(filepath.Join(dir, "out.folded"))
	if err != nil {
		t.Fatal(err)
	}
	st := folded(t, string(data))
	want := label + ";chain-nofp;_start;__libc_start_main;__libc_start_call_main;main;a;b;c;leaf"
	if st[want] != 100 || total(st) != 100 || strings.Contains(b.stderr(), "partial stacks") {
		t.Errorf("%d of 100 calls complete (%d in all):\n%s", st[want], total(st), data)
	}
}

// System-wide, a process that ran before probee started and is first
// heard of as it exits (a probe on _exit: its notice is handled once it
// is gone) is named and unwound from the mappings probee read of the
// running processes at its start, as perf synthesizes them. The program
// is a private copy of bash: no table of it is loaded, so its stack is
// finished in user space, with those mappings too.
func TestSystemWideRunningBefore(t *testing.T) {
	testgate.Root(t)
	bash := filepath.Join(t.TempDir(), "bash-early")
	data, err := os.ReadFile("/bin/bash")
	if err != nil {
		t.Skipf("no bash: %v", err)
	}
	if err := os.WriteFile(bash, data, 0o755); err != nil {
		t.Fatal(err)
	}
	target := exec.Command(bash, "-c", "read x; exit 0")
	in, err := target.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := start(t, dir, "--uprobe", "libc:_exit", "-o", "out.folded")
	b.waitFor(t, "attached", 30*time.Second)
	in.Write([]byte("go\n"))
	target.Wait()
	time.Sleep(300 * time.Millisecond) // the notice, after the process is gone
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 30*time.Second)
	out, err := os.ReadFile(filepath.Join(dir, "out.folded"))
	if err != nil {
		t.Fatal(err)
	}
	want := "libc:_exit;bash-early;_start;__libc_start_main;__libc_start_call_main;main;exit_shell;"
	var got []string
	for s, n := range folded(t, string(out)) {
		if strings.Contains(s, ";bash-early;") {
			got = append(got, fmt.Sprintf("%s %d", s, n))
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || strings.Contains(got[0], ";0x") || strings.Contains(got[0], "[unknown]") {
		t.Errorf("bash-early's stacks: %q, want one starting %s, every frame named", got, want)
	}
}

// A system-wide run sees a program it never saw stop in a stack probe
// loop (its CFA in r11). Its first hits come before the file's table is
// loaded: the kernel hands them over at their first frame, with the
// interrupted registers, and user space finishes them through the loop's
// rule (before the registers were sent, they ended in "[truncated];mid").
// Later hits are handed over at libc's frames, whose table comes later
// still. mid's 24 KiB frame keeps its return address within the stack a
// record carries; 40 calls (240 hits) fit the hand-over ring.
func TestStackProbeLoopHandedOver(t *testing.T) {
	testgate.Root(t)
	data, err := os.ReadFile(fixture(t, "bigframe-nofp"))
	if err != nil {
		t.Fatal(err)
	}
	// The first calls run before the file's table can be loaded, unless a
	// read of the mapping records happened to fall between the exec and
	// them: then nothing was handed over, and the run is tried again.
	for try := 0; try < 3; try++ {
		bin := filepath.Join(t.TempDir(), "bigframe-fresh") // a file no table was loaded for
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("%s:mid+%#x", bin, probeLoopOffset(t, bin, "mid"))
		st, stderr := runHandedOver(t, bin, label)
		if !strings.Contains(stderr, "finished in user space:") {
			continue
		}
		want := label + ";bigframe-fresh;_start;__libc_start_main;__libc_start_call_main;main;mid"
		if st[want] != 40*6 || total(st) != 40*6 {
			t.Errorf("%d of %d stacks complete, want all of 240:\n%v\n%s", st[want], total(st), st, stderr)
		}
		return
	}
	t.Error("no stack was handed over in 3 runs (the table was loaded first): the test proves nothing")
}

// runHandedOver runs probee system-wide on label while bin makes 40 calls
// of mid, and returns the stacks and probee's stderr.
func runHandedOver(t *testing.T, bin, label string) (map[string]uint64, string) {
	t.Helper()
	dir := t.TempDir()
	b := start(t, dir, "--uprobe", label, "-o", "out.folded")
	b.waitFor(t, "attached", 30*time.Second)
	if out, err := exec.Command(bin, "40", "mid").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	time.Sleep(300 * time.Millisecond) // the stacks handed over, finished
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 30*time.Second)
	out, err := os.ReadFile(filepath.Join(dir, "out.folded"))
	if err != nil {
		t.Fatal(err)
	}
	return folded(t, string(out)), b.stderr()
}
