package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/probee/probee/internal/testgate"
)

// jitStacks are the stacks of jit-fp 1000 below main: JIT code named from
// its perf map, jit_third from a line appended after the first event.
var jitStacks = map[string]uint64{
	"main;jit_outer;jit_inner;jit_leaf_callback":           500,
	"main;jit_third;jit_outer;jit_inner;jit_leaf_callback": 500,
}

// runJIT probes jit_leaf_callback of jit-fp 1000 (with args after it) in
// unwind mode and returns the folded stacks below main and the pprof
// profile written beside them.
func runJIT(t *testing.T, mode string, args ...string) (map[string]uint64, *profile.Profile) {
	t.Helper()
	bin := testgate.PrivateFixture(t, fixture(t, "jit-fp"))
	removeNewPerfMaps(t, "jit_outer")
	dir := t.TempDir()
	pb, fold := filepath.Join(dir, "x.pb.gz"), filepath.Join(dir, "x.folded")
	cmd := append([]string{"--unwind", mode, "--uprobe", bin + ":jit_leaf_callback",
		"-o", fold, "-o", pb, "--", bin, "1000", "300"}, args...)
	if r := run(t, dir, cmd...); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, err := os.ReadFile(fold)
	if err != nil {
		t.Fatal(err)
	}
	below := map[string]uint64{}
	for s, n := range folded(t, string(b)) {
		if i := strings.Index(s, ";main;"); i >= 0 {
			s = s[i+1:]
		}
		below[s] += n
	}
	return below, readPprof(t, pb)
}

// checkJITStacks compares stacks with jitStacks, exactly.
func checkJITStacks(t *testing.T, stacks map[string]uint64) {
	t.Helper()
	for s, want := range jitStacks {
		if stacks[s] != want {
			t.Errorf("stack %s: %d, want %d", s, stacks[s], want)
		}
	}
	for s, n := range stacks {
		if _, ok := jitStacks[s]; !ok {
			t.Errorf("unexpected stack %s (%d)", s, n)
		}
	}
}

// JIT code with frame pointers is walked with --unwind fp and named from
// the perf map, in folded output and in pprof (functions without a file,
// in the anonymous mapping). With rm the fixture deletes its map at exit:
// the line appended after the first event is read all the same.
func TestJITFramesFP(t *testing.T) {
	testgate.Root(t)
	for _, args := range [][]string{nil, {"rm"}} {
		t.Run(strings.Join(append([]string{"keep"}, args...), "-"), func(t *testing.T) {
			stacks, p := runJIT(t, "fp", args...)
			checkJITStacks(t, stacks)
			checkJITPprof(t, p)
		})
	}
}

// The same in the default mode (auto: DWARF tables where a binary has
// them). JIT code has none: the BPF walk takes frame-pointer steps through
// it (anonymous code, found with bpf_find_vma) and DWARF again below it.
func TestJITFramesAuto(t *testing.T) {
	testgate.Root(t)
	stacks, _ := runJIT(t, "auto")
	checkJITStacks(t, stacks)
}

// checkJITPprof checks the JIT functions of p: named, no file, located in
// an anonymous mapping without a build-id.
func checkJITPprof(t *testing.T, p *profile.Profile) {
	t.Helper()
	seen := map[string]bool{}
	for _, loc := range p.Location {
		for _, ln := range loc.Line {
			name := ln.Function.Name
			if !strings.HasPrefix(name, "jit_") || name == "jit_leaf_callback" {
				continue
			}
			seen[name] = true
			if ln.Function.Filename != "" || loc.Mapping == nil || loc.Mapping.File != "[anon]" || loc.Mapping.BuildID != "" {
				t.Errorf("pprof %s: file %q, mapping %+v; want no file, mapping [anon]", name, ln.Function.Filename, loc.Mapping)
			}
		}
	}
	for _, name := range []string{"jit_outer", "jit_inner", "jit_third"} {
		if !seen[name] {
			t.Errorf("pprof has no function %s", name)
		}
	}
}

// fibJS computes fib(25) over and over for about 2 s.
const fibJS = `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + 2000;
let x = 0;
while (Date.now() < end) x += fib(25);
if (x < 0) console.log(x);
`

// Sampling node --perf-basic-prof with --unwind fp (V8 keeps frame
// pointers in JIT code): at least half the samples hold a frame named
// after fib from the perf map ("JS:*fib /path/fib.js:1:13"), as perf -g
// shows them (about 80% there).
func TestJITNodeSample(t *testing.T) {
	testgate.Root(t)
	node, err := exec.LookPath("node")
	if err != nil {
		if testgate.Required() {
			t.Fatalf("node not found but %s=1: run tests/install-deps.sh", testgate.EnvRequire)
		}
		t.Skip("node not found: run tests/install-deps.sh")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "fib.js")
	if err := os.WriteFile(script, []byte(fibJS), 0o644); err != nil {
		t.Fatal(err)
	}
	removeNewPerfMaps(t, script)
	r := run(t, dir, "--sample", "-F", "499", "--unwind", "fp", "--", node, "--perf-basic-prof", script)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var all, js uint64
	for s, n := range folded(t, r.stdout) {
		if !strings.HasPrefix(s, "sample;node;") {
			continue
		}
		all += n
		for _, f := range strings.Split(s, ";") {
			if strings.HasPrefix(f, "JS:") && strings.Contains(f, "fib "+script+":") {
				js += n
				break
			}
		}
	}
	t.Logf("%d of %d samples hold a named fib frame", js, all)
	if all < 100 || 2*js < all {
		t.Errorf("%d of %d samples hold a JS:...fib %s frame, want >= 50%% of >= 100", js, all, script)
	}
}

// removeNewPerfMaps removes, when t ends, the /tmp/perf-*.map files made
// during t that contain marker (V8 leaves its map behind).
func removeNewPerfMaps(t *testing.T, marker string) {
	before, _ := filepath.Glob("/tmp/perf-*.map")
	old := map[string]bool{}
	for _, p := range before {
		old[p] = true
	}
	t.Cleanup(func() {
		after, _ := filepath.Glob("/tmp/perf-*.map")
		for _, p := range after {
			if b, err := os.ReadFile(p); err == nil && !old[p] && strings.Contains(string(b), marker) {
				os.Remove(p)
			}
		}
	})
}
