package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The hostile-input suite (issue #44): user nobody maps the crafted files
// of tests/hostile (with hostile-mapper) while root runs probee
// system-wide (--sample; --uprobe on the genuine workload and the
// attacker), with -p of the attacker and with the attacker as -- CMD,
// beside a genuine root workload (spin-nofp: main -> spin_a -> spin_b ->
// spin_leaf). Every run must exit 0, write its output, peak under
// hostileMaxRSS and end within -d + hostileSlack; the genuine workload's
// stacks must stay complete and correctly named.
const (
	hostileMaxRSS = 1 << 30          // probee's peak RSS, bytes (README: Security)
	hostileSlack  = 30 * time.Second // wall time allowed beyond -d
	hostileD      = 2 * time.Second  // -d of every run
	nobodyID      = 65534            // nobody and nogroup
)

// hostileCase is one attack: its files and the attacker's command.
type hostileCase struct {
	// setup makes the attack's files in dir (nobody's) and returns the
	// attacker's command; it is called once for each attacker started.
	setup func(t *testing.T, dir string) []string
	// chroot runs the attacker chrooted to its dir: no -- CMD run.
	chroot bool
	// probe is the attacker's function probed in the uprobe run
	// (default: hostile-mapper's hostile_leaf).
	probe func(argv []string) string
	// seconds are the arguments that end the attacker after secs seconds
	// (default: hostile-mapper's -t secs); the attacker of the -- CMD run
	// gets 2, the others run until killed.
	seconds func(secs string) []string
	// extra are arguments every run gets.
	extra []string
	// started is called once the attacker is ready.
	started func(t *testing.T, a *attacker)
	// check checks a run further (mode: sample, uprobe, pid, cmd).
	check func(t *testing.T, mode string, r hostileRun, a *attacker)
}

func (c hostileCase) lasting(secs string) []string {
	if c.seconds == nil {
		return []string{"-t", secs}
	}
	return c.seconds(secs)
}

// attacker is a process user nobody runs.
type attacker struct {
	cmd  *exec.Cmd
	pid  int
	argv []string
	jit  string // hostile-mapper's jit_hostile address, hex ("0": none)
	dir  string
}

// hostileRun is one probee run: its result, peak RSS, wall time, stacks.
type hostileRun struct {
	result
	rss    int64
	wall   time.Duration
	stacks map[string]uint64
}

func mapperBin(t *testing.T) string { return fixture(t, "hostile-mapper") }

// runHostile runs probee in the four modes against c's attacker beside
// the genuine workload, each mode a subtest.
func runHostile(t *testing.T, c hostileCase) {
	testgate.Root(t)
	setpriv := needTool(t, "setpriv")
	a := startAttacker(t, c) // first: its files are met before root's
	genuine := startGenuine(t)
	probe := mapperBin(t) + ":hostile_leaf"
	if c.probe != nil {
		probe = c.probe(a.argv)
	}
	modes := []struct {
		name string
		args []string
	}{
		{"sample", []string{"--sample", "-F", "199"}},
		{"uprobe", []string{"--uprobe", genuine + ":spin_leaf", "--uprobe", probe}},
		{"pid", []string{"--sample", "-F", "199", "-p", fmt.Sprint(a.pid)}},
		{"cmd", nil},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var cmd *attacker
			if m.args == nil {
				if c.chroot {
					t.Skip("the chrooted attacker is not a command probee can run")
				}
				cmd = &attacker{dir: attackDir(t)}
				argv := append(c.setup(t, cmd.dir), c.lasting("2")...)
				giveToNobody(t, cmd.dir)
				m.args = append([]string{"--sample", "-F", "199", "--", setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"}, argv...)
			}
			r := hostileProbee(t, append(c.extra, m.args...)...)
			if m.name == "sample" || m.name == "uprobe" {
				checkGenuine(t, r.stacks)
			}
			if c.check != nil {
				c.check(t, m.name, r, a)
			}
		})
	}
}

// hostileProbee runs probee with args, -d hostileD and -o a .folded file,
// and checks it exits 0, writes the file, peaks under hostileMaxRSS and
// ends within -d + hostileSlack (it is killed then).
func hostileProbee(t *testing.T, args ...string) hostileRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.folded")
	full := append([]string{"-d", hostileD.String(), "-o", out}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), hostileD+hostileSlack)
	defer cancel()
	cmd := exec.CommandContext(ctx, probee, full...)
	// Past the bound, SIGQUIT: the Go runtime prints every goroutine's
	// stack on stderr (logged below: where it hung); SIGKILL 5 s later.
	// The same delay bounds the wait for the output pipes, which a
	// command a dying probee left stopped would hold open.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	isolateMounts(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := watchPeak(cmd.Process.Pid)
	err := cmd.Wait()
	r := hostileRun{result: result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}, wall: time.Since(start)}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	r.rss = peak()
	t.Logf("probee %s\nexit %d, peak RSS %d MiB, %.1f s\nstderr:\n%s", strings.Join(full, " "), r.code, r.rss>>20, r.wall.Seconds(), r.stderr)
	if ctx.Err() != nil {
		t.Fatalf("probee did not end within -d %v + %v: killed", hostileD, hostileSlack)
	}
	if r.code != 0 {
		t.Errorf("exit %d, want 0", r.code)
	}
	if r.rss > hostileMaxRSS {
		t.Errorf("peak RSS %d MiB, want under %d MiB", r.rss>>20, hostileMaxRSS>>20)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("output not written: %v", err)
	}
	r.stacks = folded(t, string(b))
	return r
}

// watchPeak returns a function that waits for process pid to exit and
// reports its peak RSS (VmHWM), read every 20 ms until then. Not
// getrusage: Go starts a command by vfork, and the kernel carries the
// forking process's peak (the test's) over into the command's ru_maxrss.
func watchPeak(pid int) func() int64 {
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		status := fmt.Sprintf("/proc/%d/status", pid)
		for {
			b, err := os.ReadFile(status)
			_, v, ok := strings.Cut(string(b), "VmHWM:")
			if err != nil || !ok {
				return // exited (a zombie has no VmHWM)
			}
			var kb int64
			fmt.Sscan(v, &kb)
			peak = max(peak, kb<<10)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() int64 { <-done; return peak }
}

// needTool returns the path of a tool the suite runs, or skips (fails
// under PROBEE_REQUIRE_KERNEL=1) when it is missing.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil && testgate.Required() {
		t.Fatalf("%s is missing: the hostile-input suite needs it (util-linux)", name)
	}
	if err != nil {
		t.Skipf("%s is missing: the hostile-input suite needs it", name)
	}
	return p
}

// startGenuine starts root's workload, a private copy of spin-nofp, and
// returns its path; it is killed at the end of the test.
func startGenuine(t *testing.T) string {
	t.Helper()
	bin := testgate.PrivateFixture(t, fixture(t, "spin-nofp"))
	cmd := exec.Command(bin, "3600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return bin
}

// attackDir is a new directory user nobody owns (0755, in a directory
// nobody can reach), removed at the end of the test.
func attackDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "probee-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// giveToNobody makes nobody the owner of dir and all in it.
func giveToNobody(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobodyID, nobodyID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// startAttacker makes c's files in a directory of nobody's and starts its
// command as nobody, waiting for hostile-mapper's "ready" line; it is
// killed (and its perf map removed) at the end of the test.
func startAttacker(t *testing.T, c hostileCase) *attacker {
	t.Helper()
	a := &attacker{dir: attackDir(t)}
	argv := c.setup(t, a.dir)
	if c.seconds != nil {
		argv = append(argv, c.seconds("3600")...)
	}
	a.argv = argv
	giveToNobody(t, a.dir)
	a.cmd = exec.Command("setpriv", append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups"}, argv...)...)
	if c.chroot {
		a.cmd = exec.Command(argv[0], argv[1:]...)
		a.cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: a.dir,
			Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}}
	}
	a.cmd.Dir, a.cmd.Stderr = "/", os.Stderr
	stdout, _ := a.cmd.StdoutPipe()
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.pid = a.cmd.Process.Pid
	t.Cleanup(func() {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		os.Remove(fmt.Sprintf("/tmp/perf-%d.map", a.pid))
	})
	if filepath.Base(argv[0]) == "hostile-mapper" {
		waitReady(t, a, stdout)
	}
	if c.started != nil {
		c.started(t, a)
	}
	return a
}

// waitReady reads hostile-mapper's "ready PID JITADDR" line.
func waitReady(t *testing.T, a *attacker, stdout interface{ Read([]byte) (int, error) }) {
	t.Helper()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var pid int
	if _, serr := fmt.Sscanf(line, "ready %d %s", &pid, &a.jit); err != nil || serr != nil || pid != a.pid {
		t.Fatalf("attacker not ready: %q, %v %v", line, err, serr)
	}
}

// checkGenuine: root's workload was seen, and each of its stacks in its
// functions is complete (down from main) and named from its own file.
func checkGenuine(t *testing.T, stacks map[string]uint64) {
	t.Helper()
	var all, bad, short uint64
	bads := map[string]uint64{}
	for st, n := range stacks {
		if !strings.Contains(st, ";spin-nofp;") && !strings.HasPrefix(st, "spin-nofp;") {
			continue
		}
		all += n
		inSpin := strings.Contains(st, ";spin_") && !strings.HasSuffix(st, ";main")
		if strings.Contains(st, "EVIL") || inSpin && !strings.Contains(st, ";main;spin_a") {
			bad += n
			bads[st] = n
		}
		if strings.Contains(st, "[truncated]") || stopsShort(st[strings.Index(st, "spin-nofp;")+len("spin-nofp;"):]) {
			short += n
			bads[st] = n
		}
	}
	t.Logf("genuine workload: %d events, %d misnamed or incomplete, %d short", all, bad, short)
	if all < 10 || bad > 0 || float64(short) > 0.02*float64(all) {
		t.Errorf("genuine workload: %d events (want >= 10), %d misnamed or not down from main;spin_a (want 0), %d short of _start (want <= 2%%):\n%s", all, bad, short, foldedLines(bads))
	}
}
