package e2e

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
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

// A tracepoint yields user and kernel frames. A system call tracepoint of
// older kernels (6.1) gives BPF the user registers: the kernel stack is then
// the task's own, with probee's BPF frames cut (none on 5.10, which has no
// BTF task pointer to walk it with). In make vmtest too.
func TestTracepointUserAndKernel(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.folded") // stdout is the traced command's too
	r := run(t, dir, "--tracepoint", "syscalls:sys_enter_openat", "-o", out, "--", "cat", "/proc/version")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, _ := os.ReadFile(out)
	var kernel, user bool
	for s := range folded(t, string(b)) {
		kernel = kernel || strings.Contains(s, ";do_syscall_64_[k];")
		user = user || strings.Contains(s, "libc.so.6") || strings.Contains(s, "open")
		if strings.Contains(s, "bpf_prog_") || strings.Contains(s, "bpf_get_task_stack") || strings.Contains(s, "call_bpf") {
			t.Errorf("probee's own BPF frames in a stack: %q", s)
		}
	}
	if wantKernel := testgate.KernelAtLeast(5, 11); !user || kernel != wantKernel {
		t.Errorf("want user frames and kernel frames down to do_syscall_64 %v (kernel %v user %v):\n%s", wantKernel, kernel, user, b)
	}
	t.Logf("stacks:\n%s", b)
}

// glibc's clone3 ends its FDE before its syscall (the child's unwind
// information would be wrong there). Each thread creation is still a
// complete stack on both sides: the parent in the system call reaches
// _start through clone3's caller, and a new thread returning from it is
// clone3 alone, its outermost frame.
func TestCloneSyscallGap(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "load-fp")
	dir := t.TempDir()
	for _, c := range []struct {
		tp, want string
	}{
		{"sched:sched_process_fork", ";load-fp;_start;__libc_start_main;__libc_start_call_main;main;pthread_create;create_thread;__clone_internal;clone3"},
		{"raw_syscalls:sys_exit", ";load-fp;clone3"},
	} {
		out := filepath.Join(dir, "x.folded")
		if r := run(t, dir, "--tracepoint", c.tp, "-o", out, "--", bin, "1", "16"); r.code != 0 {
			t.Fatalf("exit %d", r.code)
		}
		b, _ := os.ReadFile(out)
		var n uint64
		for s, k := range folded(t, string(b)) {
			if strings.Contains(s, "[truncated]") {
				t.Errorf("%s: cut stack (%d): %q", c.tp, k, s)
			}
			if strings.HasSuffix(strings.Join(userFrames(s), ";"), c.want) {
				n += k
			}
		}
		if n != 16 {
			t.Errorf("%s: %d stacks hold %q, want 16 (one per thread):\n%s", c.tp, n, c.want, b)
		}
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

// Go runs runtime work on the thread's system stack (runtime.systemstack),
// whose frames point back to the goroutine's stack, below it on the main
// thread: every stack of newproc1 (run on the system stack for each `go`
// statement) goes on through the switch to runtime.goexit, by frame
// pointers under --unwind auto and fp. Before, 200 of 200 ended
// "[truncated];runtime.systemstack.abi0;...".
func TestGoSystemStack(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "gofx")
	want := ";runtime.goexit.abi0;runtime.main;main.main;main.spawn;runtime.newproc;" +
		"runtime.systemstack.abi0;runtime.newproc.func1;runtime.newproc1"
	for _, mode := range []string{"auto", "fp"} {
		t.Run(mode, func(t *testing.T) {
			r := run(t, "", "--unwind", mode, "--uprobe", bin+":runtime.newproc1", "--", bin, "200", "spawn")
			var n uint64
			for s, c := range folded(t, r.stdout) {
				if strings.HasSuffix(s, want) {
					n += c
				}
			}
			if r.code != 0 || n != 200 {
				t.Errorf("exit %d: %d of 200 stacks end %s:\n%s", r.code, n, want, r.stdout)
			}
		})
	}
}

// A goroutine whose stack grows calls runtime.morestack, which switches to
// the system stack with rbp 0 and calls runtime.newstack: the walk goes on
// from morestack to the goroutine (its g.sched, unwind.GoStack), so every
// stack of newstack during `gofx 200 grow` runs from runtime.goexit
// through main.deep. Before, all ended "gofx;runtime.morestack.abi0;
// runtime.newstack", as they still do under perf and --unwind fp.
// The same holds for release builds without .symtab (gofx-stripped; and
// gofx-cgo-stripped, linked by the system linker, whose functions
// .gopclntab counts from runtime.text, after C start-up code): the probe
// is resolved and the frames are named from .gopclntab, whose assembly
// functions have no ".abi0". Before, neither could be probed by name, and
// every frame of theirs was "gofx-stripped+0x...".
func TestGoStackGrowth(t *testing.T) {
	testgate.Root(t)
	var legacy error
	if !bpf.HaveCallbacks() {
		legacy = errors.New("the legacy BPF object (no BPF callbacks: before Linux 5.13) walks to runtime.morestack only")
	}
	testgate.Feature(t, "go_switch_step", testgate.KernelAtLeast(5, 13), legacy)
	for _, name := range []string{"gofx", "gofx-stripped", "gofx-cgo-stripped"} {
		t.Run(name, func(t *testing.T) {
			bin := fixture(t, name)
			r := run(t, "", "--uprobe", bin+":runtime.newstack", "--", bin, "200", "grow")
			var deep, cut uint64
			for s, c := range folded(t, r.stdout) {
				s = strings.ReplaceAll(s+";", ".abi0;", ";")
				u := userFrames(s)
				switch {
				case strings.Contains(s, ";runtime.goexit;main.grow.func1;main.deep;") &&
					strings.HasSuffix(s, ";main.deep;runtime.morestack;runtime.newstack;"):
					deep += c
				case len(u) > 2 && u[2] == "runtime.morestack":
					cut += c
				}
			}
			// Each goroutine's stack grows from 8 KiB past 64 KiB: 3 times at least.
			if r.code != 0 || deep < 600 || cut != 0 {
				t.Errorf("exit %d: %d stacks through main.deep (want 600 or more), %d ending at runtime.morestack (want 0):\n%s",
					r.code, deep, cut, r.stdout)
			}
		})
	}
}

// A Go release build (-ldflags='-s -w': no .symtab, no DWARF) gets the
// source lines of its frames from .gopclntab: with --lines, its stacks of
// runtime.newstack through main.grow are the unstripped build's, file and
// line of every frame (.symtab's ".abi0" of assembly functions aside).
// (The runtime's own start-up stacks vary from run to run.)
func TestGoReleaseBuildLines(t *testing.T) {
	testgate.Root(t)
	stacks := map[string]map[string]bool{}
	for _, name := range []string{"gofx", "gofx-stripped"} {
		bin := fixture(t, name)
		r := run(t, "", "--lines", "--uprobe", bin+":runtime.newstack", "--", bin, "20", "grow")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, r.code, r.stderr)
		}
		stacks[name] = map[string]bool{}
		for s := range folded(t, r.stdout) {
			_, s, _ = strings.Cut(s, ";") // the probe, named by the binary's path
			_, s, _ = strings.Cut(s, ";") // the command
			if strings.Contains(s, ";main.grow.func1:") {
				stacks[name][strings.ReplaceAll(s, ".abi0:", ":")] = true
			}
		}
	}
	want, got := stacks["gofx"], stacks["gofx-stripped"]
	var lines int
	for s := range want {
		lines += strings.Count(s, "/gofx/main.go:")
	}
	if !maps.Equal(got, want) || lines < 20 {
		t.Errorf("stripped build's stacks differ from the unstripped build's, or < 20 frames with main.go lines (%d):\ngot:\n%s\nwant:\n%s",
			lines, strings.Join(slices.Sorted(maps.Keys(got)), "\n"), strings.Join(slices.Sorted(maps.Keys(want)), "\n"))
	}
}
