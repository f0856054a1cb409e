package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// The chain main -> a -> b -> c -> leaf, N hits, with the entry-point caller c.
func TestUprobeChainExact(t *testing.T) {
	testgate.Root(t)
	for _, name := range []string{"chain-fp", "chain-nopie-fp"} {
		t.Run(name, func(t *testing.T) {
			bin := fixture(t, name)
			r := run(t, "", "--uprobe", bin+":leaf", "--", bin, "5000")
			if r.code != 0 {
				t.Fatalf("exit %d", r.code)
			}
			stacks := folded(t, r.stdout)
			if n := total(stacks); n != 5000 {
				t.Errorf("total %d, want 5000", n)
			}
			for s := range stacks {
				if !strings.Contains(s, ";main;a;b;c;leaf") {
					t.Errorf("stack %q lacks main;a;b;c;leaf", s)
				}
			}
		})
	}
}

// Two probes in one run: per-probe files, no cross-talk.
func TestTwoProbesPerProbeFiles(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	r := run(t, dir, "--uprobe", bin+":leaf", "--uprobe", bin+":regex:^foo_", "-o", out, "--", bin, "300")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	for f, stacks := range perProbeFolded(t, out, 2) {
		foo := strings.Contains(f, "foo")
		want := map[bool]uint64{true: 600, false: 300}[foo]
		if n := total(stacks); n != want {
			t.Errorf("%s: total %d, want %d", f, n, want)
		}
		for s := range stacks {
			if foo == strings.HasSuffix(s, ";leaf") {
				t.Errorf("%s: cross-talk stack %q", f, s)
			}
		}
		svg := strings.TrimSuffix(f, ".folded") + ".svg"
		if _, err := os.Stat(svg); err != nil {
			t.Errorf("missing %s", svg)
		}
	}
}

// A uretprobe fires in the caller after the return: the stack ends in c.
func TestUretprobe(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	r := run(t, "", "--uprobe", "ret:"+bin+":leaf", "--", bin, "200")
	stacks := folded(t, r.stdout)
	if n := total(stacks); n != 200 || r.code != 0 {
		t.Fatalf("total %d exit %d, want 200 and 0", n, r.code)
	}
	for s := range stacks {
		if !strings.HasSuffix(s, ";main;a;b;c") {
			t.Errorf("uretprobe stack %q does not end in main;a;b;c", s)
		}
	}
}

// A tracepoint yields user and kernel frames.
func TestTracepointUserAndKernel(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.folded") // stdout is the traced command's too
	r := run(t, dir, "--tracepoint", "syscalls:sys_enter_openat", "-o", out, "--", "cat", "/etc/hostname")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, _ := os.ReadFile(out)
	var kernel, user bool
	for s := range folded(t, string(b)) {
		kernel = kernel || strings.Contains(s, "_[k]")
		user = user || strings.Contains(s, "libc.so.6") || strings.Contains(s, "open")
	}
	if !kernel || !user {
		t.Errorf("want user and kernel frames (kernel %v user %v):\n%s", kernel, user, b)
	}
}

// Short-lived processes are all symbolized, also after they exited.
func TestShortLivedProcesses(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	r := run(t, "", "--uprobe", bin+":leaf", "--", "sh", "-c", "for i in $(seq 50); do "+bin+" 1; done")
	stacks := folded(t, r.stdout)
	if n := total(stacks); n != 50 {
		t.Errorf("total %d, want 50", n)
	}
	for s, n := range stacks {
		if !strings.Contains(s, "main;a;b;c;leaf") {
			t.Errorf("unsymbolized stack (%d): %q", n, s)
		}
	}
}
