package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// byLabel splits combined collapsed stacks by their probe label (the root
// frame): label -> stack without the label -> count.
func byLabel(t *testing.T, text string) map[string]map[string]uint64 {
	t.Helper()
	out := map[string]map[string]uint64{}
	for s, n := range folded(t, text) {
		label, stack, _ := strings.Cut(s, ";")
		if out[label] == nil {
			out[label] = map[string]uint64{}
		}
		out[label][stack] += n
	}
	return out
}

// usdtStacks is what the fixture's rounds give each probe: stack suffix ->
// hits per round.
var usdtStacks = map[string]map[string]uint64{
	"fx:plain":        {";main;run;plain_site": 1},
	"fx:multi":        {";main;run;multi_one": 1, ";main;run;multi_two": 2},
	"fx:gated":        {";main;run;gated_site": 1},
	"fxlib:lib_gated": {";main;run;lib_entry;lib_site": 1},
}

// checkUSDTStacks checks that the stacks of the probe labelled label are
// exactly want's, each n times per round and complete from _start.
func checkUSDTStacks(t *testing.T, comm, label string, got map[string]uint64, want map[string]uint64, rounds uint64) {
	t.Helper()
	seen := map[string]uint64{}
	for s, n := range got {
		suffix := ""
		for w := range want {
			if strings.HasSuffix(s, w) {
				suffix = w
			}
		}
		if suffix == "" || !strings.HasPrefix(s, comm+";_start;") {
			t.Errorf("%s: stack %q (%d): not from %s;_start to one of %v", label, s, n, comm, slices.Sorted(maps.Keys(want)))
		}
		seen[suffix] += n
	}
	for w, per := range want {
		if seen[w] != per*rounds {
			t.Errorf("%s: %d hits under ...%s, want %d", label, seen[w], w, per*rounds)
		}
	}
}

// Probes with and without semaphores, one at two sites, one in a library:
// exact counts and complete stacks per probe, with frame pointers and
// without (DWARF at a site in the middle of a function). The semaphores are
// set while the command runs (the kernel sets them as it maps the files).
func TestUSDTFixtureExact(t *testing.T) {
	testgate.Root(t)
	const rounds = 2000
	for _, name := range []string{"usdt-fp", "usdt-nofp"} {
		t.Run(name, func(t *testing.T) {
			bin := fixture(t, name)
			lib := filepath.Join(filepath.Dir(bin), "libusdtfx.so")
			r := run(t, "", "--usdt", bin+":fx:plain", "--usdt", bin+":fx:multi", "-e", "usdt:"+bin+":fx:gated",
				"--usdt", lib+":fxlib:lib_gated", "--", bin, strconv.Itoa(rounds))
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			if want := fmt.Sprintf("usdt: gated=%d lib_gated=%d sem=1 lib_sem=1", rounds, rounds); !strings.Contains(r.stderr, want) {
				t.Errorf("the fixture does not say %q", want)
			}
			got := byLabel(t, r.stdout)
			labels := map[string]string{bin + ":fx:plain": "fx:plain", bin + ":fx:multi": "fx:multi",
				"usdt:" + bin + ":fx:gated": "fx:gated", lib + ":fxlib:lib_gated": "fxlib:lib_gated"}
			if len(got) != len(labels) {
				t.Errorf("%d probes in the output, want %d", len(got), len(labels))
			}
			for label, probe := range labels {
				checkUSDTStacks(t, name, label, got[label], usdtStacks[probe], rounds)
			}
		})
	}
	// Every probe of the command and its library in one spec, through
	// per-site perf links (the semaphores through their own attach path).
	t.Run("usdt:*/no-uprobe-multi", func(t *testing.T) {
		bin := fixture(t, "usdt-fp")
		r := run(t, "", "--no-uprobe-multi", "--usdt", "*", "--", bin, strconv.Itoa(rounds))
		if r.code != 0 || !strings.Contains(r.stderr, "attached 5 uprobes for 1 probe") {
			t.Fatalf("exit %d, want 0 and 5 sites attached", r.code)
		}
		all := map[string]uint64{}
		for _, want := range usdtStacks {
			maps.Copy(all, want)
		}
		checkUSDTStacks(t, "usdt-fp", "*", byLabel(t, r.stdout)["*"], all, rounds)
	})
}

// usdtFixture is the usdt fixture running in its wait mode.
type usdtFixture struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bufio.Reader
}

func startUSDTFixture(t *testing.T, bin string, rounds int) *usdtFixture {
	t.Helper()
	f := &usdtFixture{cmd: exec.Command(bin, strconv.Itoa(rounds), "wait")}
	f.stdin, _ = f.cmd.StdinPipe()
	pipe, _ := f.cmd.StderrPipe()
	f.stderr = bufio.NewReader(pipe)
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.cmd.Process.Kill(); f.cmd.Wait() })
	f.expect(t, "usdt: ready sem=0 lib_sem=0")
	return f
}

// step writes a line to the fixture and returns the line it prints.
func (f *usdtFixture) step(t *testing.T) string {
	t.Helper()
	if _, err := f.stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	line, err := f.stderr.ReadString('\n')
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return strings.TrimSpace(line)
}

func (f *usdtFixture) expect(t *testing.T, want string) {
	t.Helper()
	line, _ := f.stderr.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("fixture says %q, want %q", strings.TrimSpace(line), want)
	}
}

// -p on a running process: the kernel sets both semaphores (program and
// library) when probee attaches, the gated probes fire exactly as often as
// the program saw them enabled, and once probee is gone, by SIGINT or by
// SIGKILL, the semaphores are 0 again. A copy of the fixture, so that no
// other test's uprobes on the shared file raise its semaphores too.
func TestUSDTSemaphorePID(t *testing.T) {
	testgate.Root(t)
	bin := testgate.PrivateFixture(t, filepath.Join("..", "fixtures", "bin", "usdt-fp"))
	lib := filepath.Join(filepath.Dir(bin), "libusdtfx.so")
	const rounds = 300
	// Untraced, the gated probes' code never runs.
	if out, _ := exec.Command(bin, "10").CombinedOutput(); !strings.Contains(string(out), "gated=0 lib_gated=0 sem=0 lib_sem=0") {
		t.Fatalf("untraced fixture: %s", out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			fx := startUSDTFixture(t, bin, rounds)
			pid := strconv.Itoa(fx.cmd.Process.Pid)
			p := start(t, "", "--usdt", bin+":fx:gated", "--usdt", lib+":fxlib:*", "-p", pid)
			p.waitFor(t, "attached 2 uprobes", 10*time.Second)
			if got, want := fx.step(t), fmt.Sprintf("usdt: gated=%d lib_gated=%d sem=1 lib_sem=1", rounds, rounds); got != want {
				t.Errorf("traced: fixture says %q, want %q", got, want)
			}
			p.cmd.Process.Signal(sig)
			p.wait(t, 10*time.Second)
			if sig == syscall.SIGINT {
				got := byLabel(t, p.cmd.Stdout.(fmt.Stringer).String())
				checkUSDTStacks(t, "usdt-fp", bin+":fx:gated", got[bin+":fx:gated"], usdtStacks["fx:gated"], rounds)
				checkUSDTStacks(t, "usdt-fp", lib+":fxlib:*", got[lib+":fxlib:*"], usdtStacks["fxlib:lib_gated"], rounds)
			}
			if got := fx.step(t); got != "usdt: after sem=0 lib_sem=0" {
				t.Errorf("after probee's %v: fixture says %q, want both semaphores 0", sig, got)
			}
		})
	}
}

// Debian's python3.11 (not pyenv's python3 on PATH: Debian's is built
// with --with-dtrace), traced with -p while testdata/pycalls.py runs a
// known workload under its own profiler (which 3.11 needs to fire
// function__entry for inlined calls: see the script): probee counts
// python:function__entry exactly as many times as the script counts
// Python function calls, every stack complete from _start.
func TestUSDTPython(t *testing.T) {
	testgate.Root(t)
	python := "/usr/bin/python3.11"
	if _, err := os.Stat(python); err != nil {
		if testgate.Required() {
			t.Fatalf("%s missing but %s=1: run tests/install-deps.sh", python, testgate.EnvRequire)
		}
		t.Skipf("%s missing: run tests/install-deps.sh", python)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "pycalls.py"))
	cmd := exec.Command(python, script, "300")
	stdin, _ := cmd.StdinPipe()
	pipe, _ := cmd.StderrPipe()
	stderr := bufio.NewReader(pipe)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := stderr.ReadString('\n'); line != "pycalls: ready\n" {
		t.Fatalf("pycalls says %q", line)
	}
	spec := python + ":python:function__entry"
	p := start(t, "", "--usdt", spec, "-p", strconv.Itoa(cmd.Process.Pid))
	p.waitFor(t, "attached 1 uprobe", 10*time.Second)
	stdin.Write([]byte("go\n"))
	line, _ := stderr.ReadString('\n')
	m := regexp.MustCompile(`^pycalls: calls=(\d+) expected=(\d+)\n$`).FindStringSubmatch(line)
	if m == nil || m[1] != m[2] {
		t.Fatalf("pycalls says %q, want its calls equal to its expected count", line)
	}
	cmd.Wait() // reaped: a zombie still has its /proc/PID, and -p waits for that to go
	p.wait(t, 10*time.Second)
	got := byLabel(t, p.cmd.Stdout.(fmt.Stringer).String())[spec]
	calls, _ := strconv.ParseUint(m[1], 10, 64)
	if n := total(got); n != calls {
		t.Errorf("python:function__entry fired %d times, the script made %d calls", n, calls)
	}
	for s := range got {
		if !strings.HasPrefix(s, "python3.11;_start;__libc_start_main;") || !strings.Contains(s, ";Py_RunMain;") {
			t.Errorf("stack %q is not complete from _start", s)
		}
	}
	t.Logf("%d calls, %d hits in %d stacks", calls, total(got), len(got))
}

// listing runs probee --list-probes and returns its lines.
func listing(t *testing.T, args ...string) []string {
	t.Helper()
	r := run(t, "", append([]string{"--list-probes"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	return strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
}

// Listing: one line per probe, -v each site with its semaphore, --json the
// sites with their parsed arguments, -p every loaded object's probes.
func TestUSDTList(t *testing.T) {
	bin := fixture(t, "usdt-fp")
	lib := filepath.Join(filepath.Dir(bin), "libusdtfx.so")
	want := []string{"usdt:" + bin + ":fx:gated", "usdt:" + bin + ":fx:multi", "usdt:" + bin + ":fx:plain"}
	if got := listing(t, "usdt:"+bin+":*"); !slices.Equal(got, want) {
		t.Errorf("listing:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	verbose := strings.Join(listing(t, "-v", "usdt:"+bin+":fx:*"), "\n")
	for _, re := range []string{`fx:gated +sites=1\n +addr=0x[0-9a-f]+ file_off=0x[0-9a-f]+ semaphore=0x[0-9a-f]+ semaphore_off=0x[0-9a-f]+ args="-4@%edi `,
		`fx:multi +sites=2\n +addr=0x[0-9a-f]+ file_off=0x[0-9a-f]+ args="-4@\$1"\n +addr=0x[0-9a-f]+ file_off=0x[0-9a-f]+ args="-4@%edi"\n`} {
		if !regexp.MustCompile(re).MatchString(verbose) {
			t.Errorf("-v listing does not match %s:\n%s", re, verbose)
		}
	}
	checkUSDTJSON(t, listing(t, "--json", "usdt:"+bin+":fx:gated"))
	if os.Geteuid() != 0 {
		return // -p reads /proc/PID/maps of the fixture: also as its user, but tests run it as root
	}
	fx := startUSDTFixture(t, bin, 1)
	want = []string{"usdt:" + lib + ":fxlib:lib_gated", "usdt:" + bin + ":fx:gated", "usdt:" + bin + ":fx:multi", "usdt:" + bin + ":fx:plain"}
	if got := listing(t, "usdt:*", "-p", strconv.Itoa(fx.cmd.Process.Pid)); !slices.Equal(got, want) {
		t.Errorf("-p listing:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func checkUSDTJSON(t *testing.T, lines []string) {
	t.Helper()
	var tg struct {
		Kind, Provider, Name string
		Sites                []struct {
			Address, Semaphore, SemaphoreOffset uint64
			Arguments                           []struct {
				Size    int
				Operand map[string]any
			}
		}
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &tg) != nil {
		t.Fatalf("--json: %q", lines)
	}
	if tg.Kind != "usdt" || tg.Provider != "fx" || tg.Name != "gated" || len(tg.Sites) != 1 || tg.Sites[0].Semaphore == 0 || len(tg.Sites[0].Arguments) != 4 {
		t.Fatalf("--json: %s", lines[0])
	}
	if op := tg.Sites[0].Arguments[3].Operand; op["kind"] != "memory" || op["base"] != "rip" || op["symbol"] != "fx_config" {
		t.Errorf("--json: fourth argument %v, want memory at fx_config(%%rip)", op)
	}
}

// Debian's python3.11 has 8 probes, each behind a semaphore; a JDK's
// libjvm.so more than 500.
func TestUSDTListReal(t *testing.T) {
	python := "/usr/bin/python3.11"
	if _, err := os.Stat(python); err == nil {
		lines := listing(t, "-v", "usdt:"+python+":*")
		probes := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "usdt:") {
				probes++
			} else if !strings.Contains(l, " semaphore=0x") {
				t.Errorf("site without a semaphore: %q", l)
			}
		}
		if probes != 8 || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "usdt:"+python+":python:function__entry ") }) {
			t.Errorf("%d probes in %s, want 8 with python:function__entry:\n%s", probes, python, strings.Join(lines, "\n"))
		}
	} else if testgate.Required() {
		t.Errorf("%s missing: run tests/install-deps.sh", python)
	}
	jvms, _ := filepath.Glob("/usr/lib/jvm/*/lib/server/libjvm.so")
	if len(jvms) == 0 {
		t.Skip("no JDK installed (no /usr/lib/jvm/*/lib/server/libjvm.so): libjvm.so's USDT probes not listed")
	}
	for _, jvm := range jvms {
		lines := listing(t, "usdt:"+jvm+":*")
		if len(lines) < 500 || !slices.Contains(lines, "usdt:"+jvm+":hotspot:gc__begin") {
			t.Errorf("%s: %d probes, want 500 or more with hotspot:gc__begin", jvm, len(lines))
		}
		t.Logf("%s: %d probes", jvm, len(lines))
	}
}
