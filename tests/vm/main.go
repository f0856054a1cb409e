package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// vmTests are the e2e tests run in the VM of every kernel: every
// kernel-probe test plus the uprobe (FP and DWARF, entry and return),
// sampling and latency subset, which there exercises the fallbacks of
// kernels without uprobe_multi (per-target links) and, on 5.10, without
// cookies, bpf_loop, bpf_find_vma and BPF callbacks (bpf/compat.h).
// TestShortLivedProcesses runs there too: under emulation its processes
// often exit while probee reads their mappings, the case the mmap records
// are for (and procmaps.File, which tries the path itself before anything
// under /proc/PID). TestLatencyCallers times uprobes through single uprobe
// and uretprobe links there (TestKprobeLatency, kretprobes).
// TestTracepointUserAndKernel: system call tracepoints give BPF the user
// registers before 6.12, and probee walks the task's kernel stack instead.
// TestTracepointSharedWithPerf: perf users of a tracepoint still get its
// hits, also where cilium/ebpf attaches by ioctl (before 5.15).
// TestForkedChildFaults: a forked child walked with its parent's mapping
// list, where 5.10 has no bpf_find_vma to fall back on.
// TestGoStackGrowth: a Go stack walked on from runtime.morestack, through
// a CO-RE read of the task's TLS base (skipped on 5.10's legacy build).
// TestOffCPUWaits: off-CPU time from the sched_switch BTF tracepoint and
// its step program (tail calls on a tp_btf hook), and the task state
// field's two names (state before 5.14, __state since).
// TestOffCPUWakers: the sched_waking program's walk of the waker (its own
// state slot and step program) and the interrupt entries' names.
// TestWallBesideSampleAndOffCPU: samples and waits, each thread's.
const vmTests = `^(TestKprobe.*|TestUprobeChainExact|TestTwoProbesPerProbeFiles|TestUretprobe|TestShortLivedProcesses|TestLatencyCallers|TestDWARFChainExact|TestDWARFUretprobe|TestSampleSpinFullChain|TestTracepointUserAndKernel|TestTracepointSharedWithPerf|TestForkedChildFaults|TestGoStackGrowth|TestOffCPUWaits|TestOffCPUWakers|TestWallBesideSampleAndOffCPU)$`

// vmFixtures are the fixture binaries those tests use.
var vmFixtures = []string{"chain-fp", "chain-nopie-fp", "chain-nofp", "chain-nopie-nofp", "spin-nofp", "readfile-fp", "latency-fp", "forkfault-nofp", "gofx", "gofx-stripped", "gofx-cgo-stripped", "waits-nofp"}

// vmTools are host programs the tests start inside the VM.
var vmTools = []string{"/bin/sh", "/usr/bin/seq", "/usr/bin/cat"}

const marker = "PROBEE-VMTEST-EXIT="

func main() {
	cache := flag.String("cache", "tests/vm/cache", "directory for the downloaded kernels")
	run := flag.String("run", vmTests, "regexp of the e2e tests to run in the VM")
	timeout := flag.Duration("timeout", 15*time.Minute, "limit for boot plus tests, per kernel")
	count := flag.Int("count", 1, "run each test this many times (to hunt flaky tests)")
	kernels := flag.String("kernels", os.Getenv("VMTEST_KERNELS"), "kernels of the matrix to boot, e.g. 5.10,6.12 (default $VMTEST_KERNELS, else all: "+versions(matrix)+")")
	parallel := flag.Int("parallel", 2, "VMs run at once (each emulates on one host thread)")
	flag.Parse()
	sel, err := selectKernels(*kernels)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtest: %v\n", err)
		os.Exit(2)
	}
	testArgs := fmt.Sprintf("-test.v -test.count=%d -test.run=%s", *count, *run)
	if err := vmtest(*cache, testArgs, sel, *parallel, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "vmtest: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vmtest: "+format+"\n", args...)
}

func vmtest(cache, testArgs string, kernels []release, parallel int, timeout time.Duration) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	qemu, err := ensureQemu()
	if err != nil {
		return err
	}
	images := make([]string, len(kernels))
	for i, r := range kernels {
		if images[i], err = kernel(filepath.Join(root, cache), r); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "probee-vmtest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	start := time.Now()
	initrd, err := buildInitramfs(root, work)
	if err != nil {
		return err
	}
	logf("built %s in %v", filepath.Base(initrd), time.Since(start).Round(time.Millisecond))
	results := make([]result, len(kernels))
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(parallel, 1))
	for i, r := range kernels {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			logf("booting %s (%s)", filepath.Base(images[i]), r.Suite)
			results[i] = boot(qemu, images[i], initrd, testArgs, timeout, r)
		})
	}
	wg.Wait()
	return summarize(results)
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(wd, "go.mod")); err != nil {
		return "", fmt.Errorf("run from the repository root (make vmtest): %w", err)
	}
	return wd, nil
}

// guestConfig tells the VM's init what to run (/etc/probee-vmtest.json).
type guestConfig struct {
	Dir  string   // working directory of the test binary
	Test string   // the test binary
	Env  []string // added to the environment
}

const guestConfigPath = "/etc/probee-vmtest.json"

// buildInitramfs builds the static binaries and fixtures and writes the
// initramfs holding them, the fixtures' libraries and the tools the tests run.
func buildInitramfs(root, work string) (string, error) {
	steps := [][]string{
		{"go", "build", "-trimpath", "-o", filepath.Join(work, "probee"), "./cmd/probee"},
		{"go", "test", "-c", "-o", filepath.Join(work, "e2e.test"), "./tests/e2e"},
		{"go", "build", "-o", filepath.Join(work, "init"), "./tests/vm/init"},
		append([]string{"make", "-s", "-C", "tests/fixtures"}, prefixed("bin/", vmFixtures)...),
	}
	for _, s := range steps {
		if err := runIn(root, s...); err != nil {
			return "", err
		}
	}
	cfg := guestConfig{
		Dir:  filepath.Join(root, "tests/e2e"),
		Test: "/usr/local/bin/e2e.test",
		Env:  []string{"PROBEE_IN_VM=1", "PROBEE_REQUIRE_KERNEL=1", "PROBEE_BIN=/usr/local/bin/probee"},
	}
	im, err := populate(root, work, cfg)
	if err != nil {
		return "", err
	}
	out := filepath.Join(work, "initramfs.cpio")
	f, err := os.Create(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	open := func(p string) (io.ReadCloser, error) { return os.Open(p) }
	if err := writeCpio(f, im.entries, open); err != nil {
		return "", fmt.Errorf("write initramfs: %w", err)
	}
	return out, f.Close()
}

func populate(root, work string, cfg guestConfig) (*image, error) {
	im := newImage()
	files := map[string]string{
		"/init":                 filepath.Join(work, "init"),
		"/usr/local/bin/probee": filepath.Join(work, "probee"),
		cfg.Test:                filepath.Join(work, "e2e.test"),
	}
	for dst, src := range files {
		if err := im.file(dst, src, 0o755); err != nil {
			return nil, err
		}
	}
	js, _ := json.Marshal(cfg)
	im.add(entry{name: guestConfigPath[1:], mode: modeFile | 0o644, data: js})
	im.dir(cfg.Dir)
	for _, fx := range vmFixtures {
		if err := im.binary(filepath.Join(root, "tests/fixtures/bin", fx)); err != nil {
			return nil, err
		}
	}
	for _, t := range vmTools {
		if err := im.binary(t); err != nil {
			return nil, err
		}
	}
	return im, nil
}

func prefixed(p string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, p+n)
	}
	return out
}

func runIn(dir string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}
