package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The container tests (issue 21) run ctrapp-nofp, a no-frame-pointer -O2
// program calling libctr.so, from a minimal root directory (the program,
// its libraries, ld.so) entered three ways: chroot, unshare -m -p --fork
// + chroot, and pivot_root in a new mount namespace. The program sits at
// a path H that exists on the host too, with another build of libctr.so
// (host_mid, host_leaf where the container's has box_mid, box_leaf, at
// other addresses): stacks must name the container's functions. Mounts
// are made in the namespaces the commands create, gone with them.

// ctrStack is the container program's stack at box_leaf, root first.
const ctrStack = "ctrapp;_start;__libc_start_main;__libc_start_call_main;main;run;ctr_entry;box_mid;box_leaf"

// ctrEnv is the host's copy of the program and the container's root.
type ctrEnv struct {
	host string // H: the host's ctrapp and libctr.so (host build)
	root string // R: R/H holds the container's ctrapp and libctr.so (box build)
}

// app is the program's path, the same on the host and in the container.
func (e ctrEnv) app() string { return filepath.Join(e.host, "ctrapp") }

// lib is the host path of the container's libctr.so.
func (e ctrEnv) lib() string { return filepath.Join(e.root, e.host, "libctr.so") }

func newCtrEnv(t *testing.T) ctrEnv {
	t.Helper()
	testgate.Root(t)
	app := fixture(t, "ctrapp-nofp")
	e := ctrEnv{host: t.TempDir(), root: t.TempDir()}
	install(t, app, e.app())
	install(t, fixture(t, "libctr-host.so"), filepath.Join(e.host, "libctr.so"))
	install(t, app, filepath.Join(e.root, e.app()))
	install(t, fixture(t, "libctr-box.so"), e.lib())
	for _, lib := range sharedLibs(t, e.app()) {
		if filepath.Dir(lib) != e.host {
			install(t, lib, filepath.Join(e.root, lib))
		}
	}
	for _, d := range []string{"old", "tmp"} { // pivot_root's put_old; /tmp for perf maps
		if err := os.MkdirAll(filepath.Join(e.root, d), 0o1777); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// install copies src (its contents: symbolic links followed) to dst,
// making dst's directory.
func install(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, src, dst)
}

// sharedLibs lists the libraries and the ld.so bin loads (from ldd).
func sharedLibs(t *testing.T, bin string) []string {
	t.Helper()
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", bin, err)
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
				break
			}
		}
	}
	return libs
}

// enter is a way into a container: the command that runs path with args
// under root.
type enter struct {
	name  string
	enter []string // the command, before the root and path
}

var enters = []enter{
	{"chroot", []string{"chroot"}},
	{"unshare-pid-chroot", []string{"unshare", "-m", "-p", "--fork", "chroot"}},
	{"pivot_root", []string{"unshare", "-m", "sh", "-c", `mount --bind "$0" "$0" && cd "$0" && pivot_root . old && exec "$@"`}},
}

// argv is the command running path with args in the container at root.
// The program finds libctr.so through LD_LIBRARY_PATH: its RUNPATH
// $ORIGIN needs /proc, which the container lacks.
func (en enter) argv(root, path string, args ...string) []string {
	argv := append([]string{"env", "LD_LIBRARY_PATH=" + filepath.Dir(path)}, en.enter...)
	return append(append(argv, root, path), args...)
}

// ctrStacks checks the stacks of ctrapp in folded output (probe label,
// then comm): at least minShare of its count complete (ctrStack after
// stack, which is the rest of the expected stack's prefix), none naming
// the host build's functions, and returns ctrapp's total count.
func ctrStacks(t *testing.T, stacks map[string]uint64, label string, minShare float64) uint64 {
	t.Helper()
	var all, full uint64
	for s, n := range stacks {
		rest, ok := strings.CutPrefix(s, label+";")
		if !ok || !strings.HasPrefix(rest, "ctrapp;") {
			continue
		}
		all += n
		if strings.Contains(rest, "host_") {
			t.Errorf("a container stack names the host's build: %s %d", s, n)
		}
		if strings.HasPrefix(rest, ctrStack) {
			full += n
		} else {
			t.Logf("not complete: %s %d", s, n)
		}
	}
	t.Logf("%d of %d stacks of ctrapp complete", full, all)
	if all == 0 || float64(full) < minShare*float64(all) {
		t.Errorf("%d of %d stacks of ctrapp are %s..., want >= %.0f%%", full, all, ctrStack, 100*minShare)
	}
	return all
}

// samples checks --sample output of ctrapp: >= 95% of >= 50 samples reach
// _start, and those in the library name the container's build.
func ctrSamples(t *testing.T, stacks map[string]uint64) {
	t.Helper()
	var all, start uint64
	for s, n := range stacks {
		rest, ok := strings.CutPrefix(s, "sample;")
		if !ok || !strings.HasPrefix(rest, "ctrapp;") {
			continue
		}
		all += n
		if strings.HasPrefix(rest, "ctrapp;_start;__libc_start_main;__libc_start_call_main;main;") {
			start += n
		}
		if strings.Contains(rest, "host_") || strings.Contains(rest, "libctr.so+0x") {
			t.Errorf("a container sample does not name the container's build: %s %d", s, n)
		}
	}
	t.Logf("%d of %d samples of ctrapp reach _start", start, all)
	if all < 50 || float64(start) < 0.95*float64(all) {
		t.Errorf("%d of %d samples of ctrapp reach _start, want >= 95%% of >= 50", start, all)
	}
}

// -- CMD whose command enters the container: every call's stack complete
// and symbolized from the container's files, as for a host process (the
// root gate holds the program at its exec until its tables are loaded);
// and under --sample, >= 95% of the samples reach _start.
func TestContainerCommand(t *testing.T) {
	e := newCtrEnv(t)
	for _, en := range enters {
		t.Run(en.name, func(t *testing.T) {
			label := e.lib() + ":box_leaf"
			args := append([]string{"--uprobe", label, "--"}, en.argv(e.root, e.app(), "2000")...)
			r := run(t, "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			if n := ctrStacks(t, folded(t, r.stdout), label, 1); n != 2000 {
				t.Errorf("%d hits, want 2000", n)
			}
			r = run(t, "", append([]string{"--sample", "-F", "499", "--"}, en.argv(e.root, e.app(), "0", "1.5")...)...)
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			ctrSamples(t, folded(t, r.stdout))
		})
	}
}

// startCtr starts the container program (N calls, for SECONDS) entered
// with en, and returns its pid once it runs (the command's process, or a
// descendant after unshare --fork).
func startCtr(t *testing.T, e ctrEnv, en enter, args ...string) int {
	t.Helper()
	argv := en.argv(e.root, e.app(), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if pid := descendant(cmd.Process.Pid, "ctrapp"); pid != 0 && mapsHas(pid, "libctr.so") {
			// Killed first: unshare --fork leaves its child running.
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%q: no ctrapp running after 5s", argv)
	return 0
}

// descendant returns root or a descendant of it whose comm is comm (0:
// none).
func descendant(root int, comm string) int {
	parent := map[int]int{}
	names := map[int]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(d, "/")[2])
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		names[pid] = string(b[strings.IndexByte(string(b), '(')+1 : i])
	}
	for pid, name := range names {
		if name != comm {
			continue
		}
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				return pid
			}
		}
	}
	return 0
}

func mapsHas(pid int, s string) bool {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "maps"))
	return strings.Contains(string(b), s)
}

// -p PID of a process in a container: its library name resolves to the
// file it maps (libctr:*_leaf is box_leaf, in its libctr.so, not the
// host's at that path), in --list-probes and in --uprobe; uprobe and
// sampled stacks are complete and named from its files.
func TestContainerPID(t *testing.T) {
	e := newCtrEnv(t)
	for _, en := range enters {
		t.Run(en.name, func(t *testing.T) {
			pid := strconv.Itoa(startCtr(t, e, en, "0", "30"))
			r := run(t, "", "--list-probes", "libctr:*_leaf", "-p", pid)
			path, ok := strings.CutPrefix(strings.TrimSpace(r.stdout), "uprobe:")
			path, _, _ = strings.Cut(path, ":box_leaf")
			if r.code != 0 || !ok || !sameFile(path, e.lib()) {
				t.Errorf("--list-probes libctr:*_leaf -p: %q (exit %d), want one target, box_leaf in %s", r.stdout, r.code, e.lib())
			}
			r = run(t, "", "--uprobe", "libctr:*_leaf", "-p", pid, "-d", "1s")
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			ctrStacks(t, folded(t, r.stdout), "libctr:*_leaf", 1)
			r = run(t, "", "--sample", "-F", "499", "-p", pid, "-d", "1s")
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			ctrSamples(t, folded(t, r.stdout))
		})
	}
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// System-wide, the container program started while probee runs, calling
// its library for 1.5 s after 1 s: >= 95% of the stacks complete (calls
// made before the kernel's mapping records bring its files' tables, ~50
// ms, more on a loaded machine, would be partial: system-wide, as for a
// host process) and all named from the container's build; samples of it and of
// the host's build running beside it each name their own functions.
func TestContainerSystemWide(t *testing.T) {
	e := newCtrEnv(t)
	for _, en := range enters {
		t.Run(en.name, func(t *testing.T) {
			label := e.lib() + ":box_leaf"
			b := start(t, "", "--uprobe", label, "-d", "4s")
			b.waitFor(t, "attached", 10*time.Second)
			argv := en.argv(e.root, e.app(), "0", "1.5", "1000")
			if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
				t.Fatalf("%q: %v\n%s", argv, err, out)
			}
			b.wait(t, 10*time.Second)
			if n := ctrStacks(t, folded(t, b.cmd.Stdout.(*bytes.Buffer).String()), label, 0.95); n < 1000 {
				t.Errorf("%d hits, want >= 1000", n)
			}
			sampleBeside(t, e, en)
		})
	}
}

// sampleBeside samples the whole machine while the container's program
// and the host's (same path, other build of libctr.so) run side by side.
func sampleBeside(t *testing.T, e ctrEnv, en enter) {
	t.Helper()
	pb := filepath.Join(t.TempDir(), "x.pb.gz")
	b := start(t, "", "--sample", "-F", "499", "-d", "2500ms", "-o", pb)
	b.waitFor(t, "sampling every CPU", 10*time.Second)
	host := exec.Command(e.app(), "0", "1.5")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	ctr := startCtr(t, e, en, "0", "1.5")
	host.Wait()
	b.wait(t, 10*time.Second)
	prof := readPprof(t, pb)
	all := prof.Sample
	for _, c := range []struct {
		pid       int
		want, not string
	}{{ctr, "box_leaf", "host_"}, {host.Process.Pid, "host_leaf", "box_"}} {
		prof.Sample = nil
		for _, s := range all {
			if pid := s.NumLabel["pid"]; len(pid) == 1 && pid[0] == int64(c.pid) {
				prof.Sample = append(prof.Sample, s)
			}
		}
		stacks := pprofStacks(prof)
		var named uint64
		for s, n := range stacks {
			if strings.Contains(s, c.not) {
				t.Errorf("pid %d: %s %d names the other build", c.pid, s, n)
			}
			if strings.HasSuffix(s, ";"+c.want) {
				named += n
			}
		}
		if named == 0 {
			t.Errorf("pid %d: no sample in %s:\n%v", c.pid, c.want, stacks)
		}
	}
}

// JIT frames of a process in a container are named from its perf map,
// which it writes to the container's /tmp under its pid in its own pid
// namespace (jit-fp is pid 1 there): /proc/PID/root/tmp/perf-1.map.
func TestContainerJIT(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "jit-fp")
	root := t.TempDir()
	install(t, bin, filepath.Join(root, "jit"))
	for _, lib := range sharedLibs(t, bin) {
		install(t, lib, filepath.Join(root, lib))
	}
	if err := os.Mkdir(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fold := filepath.Join(dir, "x.folded")
	r := run(t, dir, "--uprobe", filepath.Join(root, "jit")+":jit_leaf_callback", "-o", fold,
		"--", "unshare", "-m", "-p", "--fork", "chroot", root, "/jit", "1000", "300")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if _, err := os.Stat(filepath.Join(root, "tmp/perf-1.map")); err != nil {
		t.Fatalf("the program wrote no perf map as pid 1 of its namespace: %v", err)
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
	checkJITStacks(t, below)
}

// --group-by container: the stacks of a program run in a container's
// cgroup (named as docker names it) get the container's frame above the
// process, and pprof the labels container (the full id) and cgroup.
func TestContainerGroupBy(t *testing.T) {
	e := newCtrEnv(t)
	rnd := make([]byte, 32)
	rand.Read(rnd)
	id := hex.EncodeToString(rnd)
	cg := cgroupDir(t, "docker-"+id+".scope")
	dir := t.TempDir()
	pb, fold := filepath.Join(dir, "x.pb.gz"), filepath.Join(dir, "x.folded")
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	args := append([]string{"--sample", "-F", "499", "--group-by", "container", "-o", pb, "-o", fold,
		"--", "sh", "-c", script, cg}, enters[0].argv(e.root, e.app(), "0", "1")...)
	if r := run(t, dir, args...); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, err := os.ReadFile(fold)
	if err != nil {
		t.Fatal(err)
	}
	var in uint64
	for s, n := range folded(t, string(b)) {
		switch {
		case strings.HasPrefix(s, "sample;[container "+id[:12]+"];ctrapp;_start;"):
			in += n
		case strings.HasPrefix(s, "sample;[container "+id[:12]+"];ctrapp;"): // ld.so at work
		case strings.Contains(s, ";ctrapp;"):
			t.Errorf("a stack of ctrapp without its container's frame: %s %d", s, n)
		}
	}
	if in == 0 {
		t.Errorf("no stack of ctrapp under [container %s]:\n%s", id[:12], b)
	}
	for _, s := range readPprof(t, pb).Sample {
		if first := s.Label["comm"]; len(first) == 1 && first[0] == "ctrapp" {
			if got := s.Label["container"]; len(got) != 1 || got[0] != id || len(s.Label["cgroup"]) != 1 || !strings.HasSuffix(s.Label["cgroup"][0], "/docker-"+id+".scope") {
				t.Fatalf("pprof sample of ctrapp: labels %v, want container %s and its cgroup", s.Label, id)
			}
		}
	}
}

// cgroupDir makes a cgroup (v2) named name for the test, in a parent of
// its own, and removes both when the test ends (once its processes are
// gone). It skips when no cgroup2 hierarchy is mounted.
func cgroupDir(t *testing.T, name string) string {
	t.Helper()
	_, mnt := cgroupMounts(t)
	if mnt == "" {
		t.Skip("no cgroup2 hierarchy mounted")
	}
	parent := filepath.Join(mnt, fmt.Sprintf("probee-e2e-%d", os.Getpid()))
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("make cgroup: %v", err)
	}
	t.Cleanup(func() {
		for i := 0; i < 100 && os.Remove(dir) != nil; i++ {
			time.Sleep(50 * time.Millisecond) // its last processes exiting
		}
		os.Remove(parent)
	})
	return dir
}
