package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// copyFile copies src to dst with mode 0755.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// pidsOf lists the processes whose command line contains marker.
func pidsOf(marker string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, _ := os.ReadFile(d)
		if strings.Contains(string(b), marker) && !bytes.HasPrefix(b, []byte(probee)) {
			pid, _ := strconv.Atoi(strings.Split(d, "/")[2])
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitExit waits until process pid has exited (a zombie or gone).
func waitExit(t *testing.T, pid int, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d still running after %v", pid, limit)
}

// complete checks that probee wrote out.folded in dir with as many hits as
// its summary line for probe reports, and returns the folded stacks.
func complete(t *testing.T, dir, stderr, probe string) map[string]uint64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "out.folded"))
	if err != nil {
		t.Fatalf("out.folded: %v", err)
	}
	stacks := folded(t, string(data))
	m := regexp.MustCompile(regexp.QuoteMeta(probe) + `: (\d+) hits`).FindStringSubmatch(stderr)
	if m == nil || m[1] != strconv.FormatUint(total(stacks), 10) {
		t.Fatalf("summary %v != out.folded total %d", m, total(stacks))
	}
	return stacks
}

// The traced command is killed, execs, or its binary is deleted or
// replaced while probee is attached: probee finishes, writes its outputs
// and leaves nothing in the kernel.
func TestTracedProcessFaults(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	other := fixture(t, "chain-nofp")
	t.Run("killed", func(t *testing.T) {
		const n = "987612345"
		defer killStray(n)
		dir, before := t.TempDir(), snapshotKernel(t)
		b := start(t, dir, "--uprobe", bin+":leaf", "-o", "out.folded", "--", bin, n)
		b.waitFor(t, "attached", 20*time.Second)
		time.Sleep(200 * time.Millisecond)
		for _, pid := range pidsOf(n) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		b.wait(t, 20*time.Second)
		if b.code != 128+int(syscall.SIGKILL) || !strings.Contains(b.stderr(), "killed by signal") {
			t.Fatalf("exit %d, want 137 (the command's status) and 'killed by signal'", b.code)
		}
		if total(complete(t, dir, b.stderr(), "leaf")) == 0 {
			t.Error("no hits before the kill")
		}
		checkNoLeaks(t, before)
	})
	t.Run("execs", func(t *testing.T) {
		dir, before := t.TempDir(), snapshotKernel(t)
		r := run(t, dir, "--uprobe", bin+":leaf", "-o", "out.folded", "--",
			"sh", "-c", bin+" 1000 && exec "+bin+" 2000")
		if r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		if got := total(complete(t, dir, r.stderr, "leaf")); got != 3000 {
			t.Errorf("%d hits, want 3000 (1000 from the child, 2000 after exec)", got)
		}
		checkNoLeaks(t, before)
	})
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			const n = "987623456"
			defer killStray(n)
			dir, before := t.TempDir(), snapshotKernel(t)
			victim := filepath.Join(dir, "victim")
			copyFile(t, bin, victim)
			target := exec.Command(victim, n)
			if err := target.Start(); err != nil {
				t.Fatal(err)
			}
			b := start(t, dir, "--uprobe", victim+":leaf", "-o", "out.folded", "-p", strconv.Itoa(target.Process.Pid))
			b.waitFor(t, "attached", 20*time.Second)
			if how == "deleted" {
				os.Remove(victim)
			} else {
				copyFile(t, other, victim+".new")
				os.Rename(victim+".new", victim)
			}
			time.Sleep(300 * time.Millisecond)
			b.cmd.Process.Signal(syscall.SIGINT)
			b.wait(t, 20*time.Second)
			if b.code != 0 {
				t.Fatalf("exit %d", b.code)
			}
			stacks := complete(t, dir, b.stderr(), "leaf")
			if total(stacks) == 0 {
				t.Error("no hits")
			}
			// The unwind tables, reloaded when the first hit maps the
			// [uprobes] page, come from the mapped file through
			// /proc/PID/map_files, not from the path (gone, or another file).
			for s, n := range stacks {
				if !strings.HasSuffix(s, ";a;b;c;leaf") {
					t.Errorf("stack %q (%d) does not end in a;b;c;leaf", s, n)
				}
			}
			t.Logf("hits %d, partial stacks reported %d", total(stacks), partialDrops(b.stderr()))
			target.Process.Kill()
			target.Wait()
			checkNoLeaks(t, before)
		})
	}
}

// partialDrops sums the partial stacks probee reports on stderr, in either
// spelling: "dropped N: partial stacks: CAUSE" or "partial stacks: N CAUSE".
func partialDrops(stderr string) (n uint64) {
	re := regexp.MustCompile(`dropped (\d+): partial stacks|partial stacks: (\d+) `)
	for _, m := range re.FindAllStringSubmatch(stderr, -1) {
		k, _ := strconv.ParseUint(m[1]+m[2], 10, 64)
		n += k
	}
	return n
}

// A library dlopen'd and dlclose'd 50 times: every call from every mapping
// is counted and symbolized although the mapping is gone at the end, and
// unwound in full (the ld.so gate loads each new mapping's tables before
// dlopen returns); a truncated stack would have to be reported as partial.
func TestDlopenDlcloseLoop(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "dlloop-nofp")
	lib := fixture(t, "libdlplugin.so")
	dir, before := t.TempDir(), snapshotKernel(t)
	r := run(t, dir, "--uprobe", lib+":plugin_leaf", "-o", "out.folded", "--", bin, "50", "200")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	stacks := complete(t, dir, r.stderr, "plugin_leaf")
	if got := total(stacks); got != 50*200 {
		t.Errorf("%d hits, want %d", got, 50*200)
	}
	var cut uint64 // stacks taken before a new mapping's tables were loaded
	for s, n := range stacks {
		switch {
		case strings.HasSuffix(s, ";[truncated];plugin_leaf"):
			cut += n
		case !strings.HasSuffix(s, ";call_plugin;plugin_entry;plugin_leaf"):
			t.Errorf("stack %q (%d) does not end in call_plugin;plugin_entry;plugin_leaf", s, n)
		}
	}
	if drops := partialDrops(r.stderr); cut != drops || cut != 0 {
		t.Errorf("%d truncated stacks, %d reported as partial: want none", cut, drops)
	}
	t.Logf("calls %d, full stacks %d, truncated and reported %d", 50*200, total(stacks)-cut, cut)
	checkNoLeaks(t, before)
}

// SIGINT while attaching every function of (a copy of) libc, SIGTERM while the outputs
// are written and SIGTERM amid periodic drains (every 10ms) end with
// complete outputs; SIGKILL at any time leaves no program, link or tracefs
// event behind.
func TestProbeeSignalFaults(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	// A private copy of libc: thousands of uprobes that take a while to
	// attach, without touching the processes using the real one.
	libc := filepath.Join(t.TempDir(), "libc.so.6")
	copyFile(t, "/lib/x86_64-linux-gnu/libc.so.6", libc)
	cases := []struct {
		name  string
		spec  string
		after string        // stderr line to wait for
		delay time.Duration // then wait this long
		sigs  []syscall.Signal
		flags []string
	}{
		{"SIGINT during attach", libc + ":*", "DWARF unwinding", 100 * time.Millisecond, []syscall.Signal{syscall.SIGINT}, nil},
		{"SIGTERM during drain", bin + ":leaf", "attached", 300 * time.Millisecond, []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}, nil},
		{"SIGTERM during periodic drains", bin + ":leaf", "attached", 300 * time.Millisecond, []syscall.Signal{syscall.SIGTERM}, []string{"--interval", "10ms"}},
		{"SIGKILL during attach", libc + ":*", "DWARF unwinding", 100 * time.Millisecond, []syscall.Signal{syscall.SIGKILL}, nil},
		{"SIGKILL attached", bin + ":leaf", "attached", 300 * time.Millisecond, []syscall.Signal{syscall.SIGKILL}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const n = "987634567"
			defer killStray(n)
			dir, before := t.TempDir(), snapshotKernel(t)
			args := append([]string{"--uprobe", c.spec, "-o", "out.folded", "-o", "out/"}, c.flags...)
			b := start(t, dir, append(args, "--", bin, n)...)
			b.waitFor(t, c.after, 20*time.Second)
			time.Sleep(c.delay)
			for _, sig := range c.sigs {
				b.cmd.Process.Signal(sig)
				time.Sleep(5 * time.Millisecond)
			}
			// The command outlives probee (and holds its stderr open).
			waitExit(t, b.cmd.Process.Pid, 20*time.Second)
			checkNotInherited(t, n)
			killStray(n)
			b.wait(t, 20*time.Second)
			if c.sigs[0] != syscall.SIGKILL {
				if b.code != 0 || !strings.Contains(b.stderr(), "interrupted") {
					t.Fatalf("exit %d, want 0 and 'interrupted'", b.code)
				}
				complete(t, dir, b.stderr(), c.spec)
				if _, err := os.Stat(filepath.Join(dir, "out", "index.txt")); err != nil {
					t.Errorf("per-probe directory output missing: %v", err)
				}
			}
			checkNoLeaks(t, before)
		})
	}
}

// Two probee instances on the same function at once both count every call.
func TestTwoInstances(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "twice") // a private copy: no other tracee hits it
	copyFile(t, fixture(t, "chain-fp"), bin)
	before := snapshotKernel(t)
	var bs []*bg
	for i := range 2 {
		sub := filepath.Join(dir, strconv.Itoa(i))
		os.Mkdir(sub, 0o755)
		bs = append(bs, start(t, sub, "--uprobe", bin+":leaf", "-o", "out.folded"))
	}
	for _, b := range bs {
		b.waitFor(t, "attached", 20*time.Second)
	}
	cmd := exec.Command(bin, "50000")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	for i, b := range bs {
		b.cmd.Process.Signal(syscall.SIGINT)
		b.wait(t, 20*time.Second)
		got := total(complete(t, filepath.Join(dir, strconv.Itoa(i)), b.stderr(), "leaf"))
		if b.code != 0 || got != 50000 {
			t.Errorf("instance %d: exit %d, %d hits, want 50000", i, b.code, got)
		}
	}
	checkNoLeaks(t, before)
}

// Uprobes on EVEX-encoded (AVX-512) first instructions, which the kernel
// accepts but single-steps wrongly, are skipped: a program using a traced
// copy of libc still prints correctly (on CPUs without AVX-512 the _evex
// functions are not used and this passes trivially).
func TestEVEXNotProbed(t *testing.T) {
	testgate.Root(t)
	lib := t.TempDir()
	copyFile(t, "/lib/x86_64-linux-gnu/libc.so.6", filepath.Join(lib, "libc.so.6"))
	b := start(t, t.TempDir(), "--uprobe", filepath.Join(lib, "libc.so.6")+":regex:_evex", "-d", "20s")
	b.waitFor(t, "attached", 20*time.Second)
	cmd := exec.Command("printf", "%s-%d more information", "hello", "42")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
	out, err := cmd.Output()
	if string(out) != "hello-42 more information" || err != nil {
		t.Errorf("printf under the traced libc copy: %q, %v", out, err)
	}
	b.cmd.Process.Signal(syscall.SIGINT)
	b.wait(t, 20*time.Second)
}
