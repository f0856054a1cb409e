package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/probee/probee/internal/testgate"
)

// bg is a probee running in the background, its stderr collected by line.
type bg struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	code  int
}

func start(t *testing.T, dir string, args ...string) *bg {
	t.Helper()
	b := &bg{cmd: exec.Command(probee, args...), done: make(chan struct{})}
	b.cmd.Dir = dir
	isolateMounts(b.cmd)
	b.cmd.Stdout = &bytes.Buffer{}
	pipe, err := b.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
		}
		err := b.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			b.code = ee.ExitCode()
		}
		close(b.done)
	}()
	t.Cleanup(func() { b.cmd.Process.Kill(); <-b.done })
	return b
}

func (b *bg) stderr() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// waitFor waits until stderr contains s.
func (b *bg) waitFor(t *testing.T, s string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(b.stderr(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on stderr after %v:\n%s", s, limit, b.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *bg) wait(t *testing.T, limit time.Duration) {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(limit):
		t.Fatalf("probee still running after %v:\n%s", limit, b.stderr())
	}
	t.Logf("stderr:\n%s", b.stderr())
}

// killStray kills processes whose command line contains marker.
func killStray(marker string) {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, _ := os.ReadFile(d)
		if strings.Contains(string(b), marker) {
			pid, _ := strconv.Atoi(strings.Split(d, "/")[2])
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// SIGINT and SIGTERM stop tracing cleanly and the outputs are complete.
func TestSignalsWriteOutputs(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			const n = "987654321" // runs for minutes; marks the stray command
			defer killStray(n)
			b := start(t, dir, "--uprobe", bin+":leaf", "-o", "out.folded", "-o", "out/", "--", bin, n)
			b.waitFor(t, "attached", 20*time.Second)
			time.Sleep(300 * time.Millisecond)
			b.cmd.Process.Signal(sig)
			waitExit(t, b.cmd.Process.Pid, 20*time.Second)
			killStray(n) // the command outlives probee and holds its stderr open
			b.wait(t, 20*time.Second)
			if b.code != 0 || !strings.Contains(b.stderr(), "interrupted") {
				t.Fatalf("exit %d, want 0 and 'interrupted' on stderr", b.code)
			}
			data, err := os.ReadFile(filepath.Join(dir, "out.folded"))
			stacks := folded(t, string(data))
			if err != nil || total(stacks) == 0 {
				t.Fatalf("out.folded: %v, %d hits", err, total(stacks))
			}
			hits := regexp.MustCompile(`leaf: (\d+) hits`).FindStringSubmatch(b.stderr())
			if hits == nil || hits[1] != strconv.FormatUint(total(stacks), 10) {
				t.Errorf("stderr hits %v != folded total %d", hits, total(stacks))
			}
			if _, err := os.Stat(filepath.Join(dir, "out", "index.txt")); err != nil {
				t.Errorf("per-probe directory output missing: %v", err)
			}
		})
	}
}

// -d expiry stops tracing; -p stops when the process exits.
func TestDurationAndPIDExit(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	const n = "876543219"
	defer killStray(n)
	target := exec.Command(bin, n)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := run(t, dir, "--uprobe", bin+":leaf", "-p", strconv.Itoa(target.Process.Pid), "-d", "500ms", "-o", "d.folded")
	data, _ := os.ReadFile(filepath.Join(dir, "d.folded"))
	if r.code != 0 || total(folded(t, string(data))) == 0 {
		t.Fatalf("-d: exit %d, %d hits", r.code, total(folded(t, string(data))))
	}
	b := start(t, dir, "--uprobe", bin+":leaf", "-p", strconv.Itoa(target.Process.Pid), "-o", "p.folded")
	b.waitFor(t, "attached", 20*time.Second)
	target.Process.Kill()
	target.Wait()
	b.wait(t, 10*time.Second)
	if b.code != 0 || !strings.Contains(b.stderr(), "exited") {
		t.Errorf("-p: exit %d, want 0 and 'exited'", b.code)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.folded")); err != nil {
		t.Error(err)
	}
}

// -d expiry with -- CMD: the outputs are written, then the command, which
// would run for minutes, is stopped (SIGTERM) rather than left behind.
func TestDurationStopsCommand(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	const n = "876543291"
	defer killStray(n)
	dir := t.TempDir()
	r := run(t, dir, "--uprobe", bin+":leaf", "-d", "500ms", "-o", "out.folded", "--", bin, n)
	if r.code != 0 || !strings.Contains(r.stderr, "stopped the command") || !strings.Contains(r.stderr, "SIGTERM") {
		t.Fatalf("exit %d, want 0 and the command stopped with SIGTERM", r.code)
	}
	complete(t, dir, r.stderr, bin+":leaf")
	if pids := pidsOf(n); len(pids) > 0 {
		t.Errorf("the command is still running: pids %v", pids)
	}
}

// Every function of libc on a running workload: >= 1500 probes on one
// uprobe_multi link; refused addresses are named. (Attach and detach times
// are measured by tests/bench/15-attach-libc.sh, not asserted here.)
func TestLibcAll(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	const n = "765432198"
	defer killStray(n)
	target := exec.Command(bin, n)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "--uprobe", "libc:*", "-p", strconv.Itoa(target.Process.Pid), "-d", "300ms", "-o", "x.folded")
	m := regexp.MustCompile(`attached (\d+) uprobes(?: \((\d+) skipped\))?`).FindStringSubmatch(r.stderr)
	if r.code != 0 || m == nil {
		t.Fatalf("exit %d, no attach line", r.code)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1500 {
		t.Errorf("attached %d uprobes, want >= 1500", n)
	}
	if m[2] != "" && !strings.Contains(r.stderr, "the kernel refused it") {
		t.Errorf("%s skipped but no warning names them", m[2])
	}
}

// The in-kernel pid filter: an unrelated process running the same binary at
// the same time is not counted, neither with -- CMD nor with -p.
func TestPIDFilter(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	const n = "654321987"
	defer killStray(n)
	other := exec.Command(bin, n) // hits leaf all the time, never traced
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "--uprobe", bin+":leaf", "--", bin, "700")
	if got := total(folded(t, r.stdout)); got != 700 || r.code != 0 {
		t.Errorf("-- CMD: %d hits, exit %d; want exactly the command's 700", got, r.code)
	}
	target := exec.Command(bin, n)
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(target.Process.Pid)
	dir := t.TempDir()
	r = run(t, dir, "--uprobe", bin+":leaf", "-p", pid, "-d", "300ms", "-o", "x.pb.gz")
	if r.code != 0 {
		t.Fatalf("-p: exit %d", r.code)
	}
	f, err := os.Open(filepath.Join(dir, "x.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Sample) == 0 {
		t.Fatalf("-p: no samples:\n%s", r.stderr)
	}
	for _, smp := range prof.Sample {
		if got := smp.NumLabel["pid"]; len(got) != 1 || got[0] != int64(target.Process.Pid) {
			t.Errorf("-p %s: a sample of pid %v", pid, got)
		}
	}
}
