// Package e2e runs the real probee binary, as root, against the fixture
// programs built by `make fixtures` (tests/fixtures), checking stacks, counts,
// outputs, errors and clean-up end to end.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

var probee string // path of the binary under test

// tmpDir is the package's temporary directory, removed when the tests end:
// what tests share (the hostile suite's deflated zeros).
var tmpDir string

func TestMain(m *testing.M) {
	if n := os.Getenv(getppidLoopEnv); n != "" {
		getppidLoop(n) // started again as a traced command (coexist_test.go)
	}
	dir, err := os.MkdirTemp("", "probee-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // TestNotRoot runs probee as nobody
	tmpDir = dir
	// Every probee run keeps its unwind table cache here, not in the
	// user's ~/.cache (tests that need their own set XDG_CACHE_HOME in
	// the command's environment).
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	probee = filepath.Join(dir, "probee")
	if p := os.Getenv("PROBEE_BIN"); p != "" {
		probee = p // prebuilt (make vmtest: no Go toolchain in the VM)
	} else if err := buildProbee(probee); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildProbee(out string) error {
	build := exec.Command("go", "build", "-o", out, "../../cmd/probee")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build probee: %v\n%s", err, b)
	}
	return nil
}

// fixture returns the absolute path of a fixture binary.
func fixture(t *testing.T, name string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs probee with args in dir (or the test's temp dir when empty).
func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runAs(t, dir, -1, args...)
}

// runAs is run as user uid (-1: the test's own user).
func runAs(t *testing.T, dir string, uid int, args ...string) result {
	t.Helper()
	cmd := exec.Command(probee, args...)
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	} else {
		isolateMounts(cmd)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	cmd.Dir = dir
	r := runCmd(t, cmd)
	t.Logf("probee %s\nexit %d\nstderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	return r
}

// runCmd runs cmd to its end and returns its output and exit code.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", cmd.Path, err)
	}
	return r
}

// isolateMounts runs cmd (probee, or a script that runs it) in a private
// mount namespace when the tests run as root: what probee mounts when it
// is missing (tracefs for tracepoints) is gone when it exits, so the tests
// leave the machine's mounts as they found them (TestFreshMachine).
func isolateMounts(cmd *exec.Cmd) {
	if os.Geteuid() != 0 {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Unshareflags |= syscall.CLONE_NEWNS // Go makes / private
}

// folded parses collapsed stacks into stack -> count.
func folded(t *testing.T, text string) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var n uint64
		if _, err := fmt.Sscan(line[i+1:], &n); i < 0 || err != nil {
			t.Fatalf("bad collapsed line %q", line)
		}
		m[line[:i]] += n
	}
	return m
}

// foldedLines prints stack -> count as sorted collapsed lines, for messages.
func foldedLines(m map[string]uint64) string {
	lines := make([]string, 0, len(m))
	for st, n := range m {
		lines = append(lines, fmt.Sprintf("%s %d", st, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func total(m map[string]uint64) (n uint64) {
	for _, v := range m {
		n += v
	}
	return n
}

// perProbeFolded reads the per-probe .folded files of an `-o DIR/` output
// (path -> stacks) and fails t unless there are exactly n of them.
func perProbeFolded(t *testing.T, dir string, n int) map[string]map[string]uint64 {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.folded"))
	if len(files) != n {
		t.Fatalf("want %d per-probe folded files, got %v", n, files)
	}
	out := map[string]map[string]uint64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = folded(t, string(b))
	}
	return out
}
