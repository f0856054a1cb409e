package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// Kernel-probe tests. The CI host has no kprobes: there only
// TestKprobeUnavailable runs, the others skip; make vmtest runs them all in
// VMs (PROBEE_IN_VM=1) of the kernel matrix: 5.10 and 6.1 have neither
// kprobe_multi nor uprobe_multi (the per-function and per-target link paths),
// 6.12 has both.

// inVM reports whether the tests run inside make vmtest's VM.
func inVM() bool { return os.Getenv("PROBEE_IN_VM") == "1" }

// haveKprobes looks for the kprobe PMU or tracefs kprobe_events, as probee does.
func haveKprobes() bool {
	for _, p := range []string{"/sys/bus/event_source/devices/kprobe", "/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// needKprobes skips (or, in the VM, fails) a test when the kernel has no kprobes.
func needKprobes(t *testing.T) {
	t.Helper()
	testgate.Root(t)
	if haveKprobes() {
		return
	}
	if inVM() {
		t.Fatal("the VM's kernel should have kprobes (kprobe PMU or kprobe_events) but has neither")
	}
	testgate.Missing(t, "kprobes", "CONFIG_KPROBES is not set")
}

// On a kernel without kprobes a kprobe spec fails with exactly one line.
func TestKprobeUnavailable(t *testing.T) {
	if haveKprobes() {
		t.Skip("this kernel has kprobes: the other TestKprobe tests cover it")
	}
	r := run(t, "", "--kprobe", "vfs_read", "-d", "1s")
	const want = "kprobes are not available on this kernel (CONFIG_KPROBES is not set): try --tracepoint"
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.HasPrefix(strings.TrimPrefix(lines[0], "probee: "), want) {
		t.Errorf("exit %d, stderr %q: want exit 1 and one line starting %q", r.code, r.stderr, want)
	}
}

// readFixture writes a 4 KiB file: readfile-fp reads it in 64 chunks plus
// one read at EOF, so each pass calls vfs_read 65 times under read_all.
func readFixture(t *testing.T) (bin, file string, perPass uint64) {
	bin = fixture(t, "readfile-fp")
	file = filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(file, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, file, 4096/64 + 1
}

// traceFolded runs probee with args and -o DIR/x.folded and returns the stacks.
func traceFolded(t *testing.T, args ...string) (map[string]uint64, result) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "x.folded")
	r := run(t, dir, append([]string{"-o", out}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return folded(t, string(b)), r
}

// under sums the stacks containing part.
func under(stacks map[string]uint64, part string) (n uint64) {
	for s, c := range stacks {
		if strings.Contains(s, part) {
			n += c
		}
	}
	return n
}

// A kprobe on vfs_read (also given with its module, vmlinux): kernel stacks
// ending in vfs_read_[k] under user stacks reaching the fixture's main.
func TestKprobeVfsRead(t *testing.T) {
	needKprobes(t)
	for _, spec := range []string{"vfs_read", "vmlinux:vfs_read"} {
		t.Run(spec, func(t *testing.T) {
			bin, file, per := readFixture(t)
			stacks, _ := traceFolded(t, "--kprobe", spec, "--", bin, file, "20")
			if n := under(stacks, ";main;read_all;"); n != 20*per {
				t.Errorf("%d events under main;read_all, want %d", n, 20*per)
			}
			for s, n := range stacks {
				if !strings.HasPrefix(s, spec+";readfile-fp;") {
					t.Errorf("stack (%d) without the probe label and the command: %q", n, s)
				}
				if strings.Contains(s, ";main;read_all;") && !strings.HasSuffix(s, ";vfs_read_[k]") {
					t.Errorf("stack (%d) does not end in vfs_read_[k]: %q", n, s)
				}
			}
		})
	}
}

var attachedKprobes = regexp.MustCompile(`attached (\d+) kprobes`)

// A glob attaches every matching function (kprobe_multi or one link each).
func TestKprobeGlob(t *testing.T) {
	needKprobes(t)
	bin, file, per := readFixture(t)
	// Periodic drains every 10ms move kernel stacks out while events
	// keep coming: the counts and stacks stay exact. 400 passes (26K
	// reads) last several drains; 5 passes were over before the first
	// drain when the command started fast (a 6.12 VM run).
	const passes = 400
	stacks, r := traceFolded(t, "--kprobe", "vfs_*", "--interval", "10ms", "--", bin, file, strconv.Itoa(passes))
	m := attachedKprobes.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("stderr does not say how many kprobes were attached")
	}
	if n, _ := strconv.Atoi(m[1]); n < 10 {
		t.Errorf("attached %d kprobes for vfs_*, want many", n)
	}
	var reads uint64
	for s, n := range stacks {
		if strings.Contains(s, ";main;read_all;") && strings.HasSuffix(s, ";vfs_read_[k]") {
			reads += n
		}
	}
	if reads != passes*per {
		t.Errorf("%d vfs_read events under main;read_all, want %d", reads, passes*per)
	}
	if d := drainsRE.FindStringSubmatch(r.stderr); d == nil || d[1] == "0" {
		t.Errorf("no periodic drain reported: %q", d)
	}
}

// A kretprobe fires once per return, in the caller of vfs_read.
func TestKprobeKretprobe(t *testing.T) {
	needKprobes(t)
	bin, file, per := readFixture(t)
	stacks, _ := traceFolded(t, "--kprobe", "kretprobe:vfs_read", "--", bin, file, "10")
	if n := under(stacks, ";main;read_all;"); n != 10*per {
		t.Errorf("%d events under main;read_all, want %d", n, 10*per)
	}
	// Before 5.15 the kernel's unwinder stops at the trampoline a
	// kretprobe returns through: the kernel stack is that one frame.
	caller := "ksys_read_[k]"
	if kernelBefore(t, 5, 15) {
		caller = ";kretprobe_trampoline_[k]"
	}
	for s, n := range stacks {
		if strings.Contains(s, ";main;read_all;") && !strings.Contains(s, caller) {
			t.Errorf("kretprobe stack (%d) lacks %s: %q", n, caller, s)
		}
	}
}

// kernelBefore reports whether the running kernel is older than major.minor.
func kernelBefore(t *testing.T, major, minor int) bool {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	var maj, min int
	if _, err := fmt.Sscanf(string(rel), "%d.%d", &maj, &min); err != nil {
		t.Fatalf("kernel release %q: %v", rel, err)
	}
	return maj < major || maj == major && min < minor
}

// A kprobe and a uprobe in one run: one file each, each with its own events.
func TestKprobeAndUprobe(t *testing.T) {
	needKprobes(t)
	bin, file, per := readFixture(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	r := run(t, dir, "--kprobe", "vfs_read", "--uprobe", bin+":read_chunk", "-o", out, "--", bin, file, "10")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	for f, stacks := range perProbeFolded(t, out, 2) {
		kprobe := strings.Contains(filepath.Base(f), "vfs_read")
		if kprobe && under(stacks, ";main;read_all;") != 10*per {
			t.Errorf("%s: %d events under main;read_all, want %d", f, under(stacks, ";main;read_all;"), 10*per)
		}
		if !kprobe && under(stacks, ";main;read_all;read_chunk") != 10*per {
			t.Errorf("%s: %d events in main;read_all;read_chunk, want %d", f, under(stacks, ";main;read_all;read_chunk"), 10*per)
		}
		if under(stacks, "_[k]") > 0 != kprobe {
			t.Errorf("%s: kernel frames in a uprobe file or none in a kprobe file", f)
		}
	}
}

// Acceptance: kprobe latency (a kprobe at the entry, a kretprobe at the
// return): every vfs_read under read_all is timed, with its user and
// kernel stack, and every return pairs with its entry.
func TestKprobeLatency(t *testing.T) {
	needKprobes(t)
	bin, file, per := readFixture(t)
	m := measure(t, "--latency", "--kprobe", "vfs_read", "--", bin, file, "20")
	var calls, ns uint64
	for s, n := range m.calls {
		if strings.Contains(s, ";main;read_all;") && strings.HasSuffix(s, ";vfs_read_[k]") {
			calls += n
			ns += m.folded[s]
		}
	}
	if calls != 20*per || ns == 0 {
		t.Errorf("%d calls of vfs_read under main;read_all taking %d ns, want %d calls", calls, ns, 20*per)
	}
	s := m.summary["vfs_read"]
	if s.calls < 20*per || len(s.untimed) != 0 {
		t.Errorf("summary %+v: want at least %d calls, all timed", s, 20*per)
	}
	checkLatencyPprof(t, m)
}
