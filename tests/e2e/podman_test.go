package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The container tests again, in real podman containers (issue 44): the
// image holds ctrapp-nofp with the box build of libctr.so at a path H
// that exists on the host too, with the host build (newCtrEnv), and the
// libraries and ld.so ldd names. podman_env_test.go runs podman.

// exactStacks checks that every stack of probe label in stacks is
// label;want (none cut short, none naming other functions) and returns
// their count.
func exactStacks(t *testing.T, stacks map[string]uint64, label, want string) uint64 {
	t.Helper()
	var n uint64
	for s, c := range stacks {
		if !strings.HasPrefix(s, label+";") {
			continue
		}
		if s != label+";"+want {
			t.Errorf("not the expected stack: %s %d", s, c)
		}
		n += c
	}
	return n
}

// -p PID of a process in a podman container, with specs naming the
// container's paths: they resolve inside the process's root, to its
// files, not to the host's at those paths (H/ctrapp is another copy of
// the program there; the host's H/libctr.so has no box_leaf). Every
// hit's stack is complete and named from the container's files. Before
// (934e4b2), the program's spec attached to the host's copy (0 hits,
// exit 0) and the library's found no box_leaf in the host's build.
func TestPodmanPID(t *testing.T) {
	needPodman(t)
	e := newCtrEnv(t)
	c := podmanStart(t, podmanImage(t, e.root), e.app(), "0", "60")
	waitMaps(t, c.pid, "libctr.so")
	pid := strconv.Itoa(c.pid)
	const start = "ctrapp;_start;__libc_start_main;__libc_start_call_main;main;run"
	for _, tt := range []struct{ name, spec, want string }{
		{"program", e.app() + ":run", start},
		{"library", filepath.Join(e.host, "libctr.so") + ":box_leaf", ctrStack},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, "", "--uprobe", tt.spec, "-p", pid, "-d", "1s")
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			if n := exactStacks(t, folded(t, r.stdout), tt.spec, tt.want); n < 100 {
				t.Errorf("%d hits of %s in 1s of a busy loop, want >= 100:\n%s", n, tt.spec, r.stdout)
			}
		})
	}
}

// System-wide, a short-lived podman container whose shell runs ctrapp 30
// times (1000 calls each, ~10 ms, from their start: before the kernel's
// mapping records bring the container's tables), a uprobe on the
// library in the image's layer (the file the container maps): every call
// counted, every stack complete (none cut to "[truncated];box_leaf")
// and named from the container's files. The shell, whose root gives
// those stacks their tables, lives 1 s after the last run, as a
// container's main process outlives its children: without that, one run
// of 6 on a machine at a load average of 66 gave 80
// [truncated];box_leaf (a container gone before probee got to its
// mapping records leaves no root to read). Before, such stacks were
// finished in user space without the container's tables: 934e4b2's
// binary gave 36 and 336 [truncated];box_leaf of 30000 (without the
// shell's second: 8, and 100 ctrapp;box_mid;box_leaf, cut with no
// marker).
func TestPodmanShortLived(t *testing.T) {
	needPodman(t)
	e := newCtrEnv(t)
	installShell(t, e)
	install(t, "/bin/sleep", filepath.Join(e.root, "bin/sleep")) // its libraries: sh's
	image := podmanImage(t, e.root)
	label := filepath.Join(podmanLayer(t, image), e.host, "libctr.so") + ":box_leaf"
	b := start(t, "", "--uprobe", label, "-d", "60s")
	b.waitFor(t, "attached", 20*time.Second)
	const runs, calls = 30, 1000
	loop := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do %s %d; i=$((i+1)); done; /bin/sleep 1`, runs, e.app(), calls)
	id := podmanRun(t, image, "/bin/sh", "-c", loop)
	t.Logf("container %s ran", id)
	time.Sleep(200 * time.Millisecond)
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 30*time.Second)
	if b.code != 0 {
		t.Fatalf("exit %d", b.code)
	}
	stacks := folded(t, b.cmd.Stdout.(*bytes.Buffer).String())
	for s, n := range stacks {
		if strings.HasSuffix(s, ";[truncated];box_leaf") {
			t.Errorf("a stack cut to its leaf: %s %d", s, n)
		}
	}
	if n := ctrStacks(t, stacks, label, 1); n != runs*calls {
		t.Errorf("%d hits, want %d", n, runs*calls)
	}
}

// --group-by container, system-wide, two podman containers running
// ctrapp: each one's samples are under its own [container ID] frame and
// pprof label container, the ids podman ps --no-trunc lists.
func TestPodmanGroupBy(t *testing.T) {
	needPodman(t)
	e := newCtrEnv(t)
	image := podmanImage(t, e.root)
	ctrs := []podmanCtr{podmanStart(t, image, e.app(), "0", "60"), podmanStart(t, image, e.app(), "0", "60")}
	listed := map[string]string{} // name -> id
	for _, line := range strings.Split(podman(t, false, "ps", "--no-trunc", "--format", "{{.Names}} {{.ID}}"), "\n") {
		if name, id, ok := strings.Cut(line, " "); ok {
			listed[name] = id
		}
	}
	for _, c := range ctrs {
		waitMaps(t, c.pid, "libctr.so")
		if listed[c.name] != c.id || len(c.id) != 64 {
			t.Fatalf("podman ps --no-trunc lists %s as %q, podman run said %q", c.name, listed[c.name], c.id)
		}
	}
	dir := t.TempDir()
	pb, fold := filepath.Join(dir, "x.pb.gz"), filepath.Join(dir, "x.folded")
	if r := run(t, dir, "--sample", "-F", "199", "--group-by", "container", "-d", "1s", "-o", pb, "-o", fold); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, err := os.ReadFile(fold)
	if err != nil {
		t.Fatal(err)
	}
	stacks := folded(t, string(b))
	prof := readPprof(t, pb)
	for _, c := range ctrs {
		var framed uint64
		for s, n := range stacks {
			if strings.HasPrefix(s, "sample;[container "+c.id[:12]+"];ctrapp;_start;") {
				framed += n
			}
		}
		var samples int64
		for _, s := range prof.Sample {
			if pid := s.NumLabel["pid"]; len(pid) != 1 || pid[0] != int64(c.pid) {
				continue
			}
			samples += s.Value[0]
			ctr, cg := s.Label["container"], s.Label["cgroup"]
			if len(ctr) != 1 || ctr[0] != c.id || len(cg) != 1 || !strings.Contains(cg[0], c.id) {
				t.Errorf("container %s (pid %d): pprof labels %v, want container %s and its cgroup", c.name, c.pid, s.Label, c.id)
				break
			}
		}
		t.Logf("container %s: %d samples under [container %s], %d pprof samples of pid %d", c.name, framed, c.id[:12], samples, c.pid)
		if framed == 0 || samples == 0 {
			t.Errorf("container %s: %d samples of ctrapp under [container %s], %d pprof samples of pid %d, want some", c.name, framed, c.id[:12], samples, c.pid)
		}
	}
}

// --group-by container, system-wide, a podman container whose shell runs
// ctrapp 3 times 200 times (each run a few milliseconds, gone or a
// zombie before probee reads its cgroup; the shell itself never hits the
// probe), a uprobe on the image layer's library: every hit is under the
// container's frame, taken from the short-lived process's living parent
// (the shell) as its files' root is. The shell lives 1 s after its last
// run, as a container's main process outlives its children. Before, 216
// of 600 hits had no container frame (a child gone before its notice
// took its parent's recorded container, none for a shell never seen).
func TestPodmanGroupByShortLived(t *testing.T) {
	needPodman(t)
	e := newCtrEnv(t)
	installShell(t, e)
	install(t, "/bin/sleep", filepath.Join(e.root, "bin/sleep"))
	image := podmanImage(t, e.root)
	label := filepath.Join(podmanLayer(t, image), e.host, "libctr.so") + ":box_leaf"
	b := start(t, "", "--uprobe", label, "--group-by", "container", "-d", "60s")
	b.waitFor(t, "attached", 20*time.Second)
	const runs, calls = 200, 3
	loop := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do %s %d; i=$((i+1)); done; /bin/sleep 1`, runs, e.app(), calls)
	id := podmanRun(t, image, "/bin/sh", "-c", loop)
	time.Sleep(200 * time.Millisecond)
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 30*time.Second)
	if b.code != 0 {
		t.Fatalf("exit %d", b.code)
	}
	framed, others := containerHits(folded(t, b.cmd.Stdout.(*bytes.Buffer).String()), label, id)
	t.Logf("container %s: %d hits under [container %s], %d not", id, framed, id[:12], total(others))
	if framed != runs*calls || len(others) != 0 {
		t.Errorf("%d hits under [container %s], want %d; not under it:\n%s", framed, id[:12], runs*calls, foldedLines(others))
	}
}

// containerHits counts the hits of label under container id's frame and
// returns the other stacks of label.
func containerHits(stacks map[string]uint64, label, id string) (framed uint64, others map[string]uint64) {
	others = map[string]uint64{}
	for s, n := range stacks {
		switch {
		case strings.HasPrefix(s, label+";[container "+id[:12]+"];ctrapp;"):
			framed += n
		case strings.HasPrefix(s, label+";"):
			others[s] += n
		}
	}
	return framed, others
}
