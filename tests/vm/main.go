package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// vmTests are the e2e tests run in the VM: every kernel-probe test plus the
// uprobe subset (which there exercises the per-target link fallback of a
// kernel without uprobe_multi). TestShortLivedProcesses runs there too:
// under emulation its processes often exit while probee reads their
// mappings, the case the mmap records are for (and procmaps.File, which
// tries the path itself before anything under /proc/PID).
// TestLatencyCallers times uprobes through single uprobe and uretprobe
// links there (TestKprobeLatency, kretprobes).
const vmTests = `^(TestKprobe.*|TestUprobeChainExact|TestTwoProbesPerProbeFiles|TestUretprobe|TestShortLivedProcesses|TestLatencyCallers)$`

// vmFixtures are the fixture binaries those tests use.
var vmFixtures = []string{"chain-fp", "chain-nopie-fp", "readfile-fp", "latency-fp"}

// vmTools are host programs the tests start inside the VM.
var vmTools = []string{"/bin/sh", "/usr/bin/seq", "/usr/bin/cat"}

const marker = "PROBEE-VMTEST-EXIT="

func main() {
	cache := flag.String("cache", "tests/vm/cache", "directory for the downloaded kernel")
	run := flag.String("run", vmTests, "regexp of the e2e tests to run in the VM")
	timeout := flag.Duration("timeout", 10*time.Minute, "limit for boot plus tests")
	count := flag.Int("count", 1, "run each test this many times (to hunt flaky tests)")
	flag.Parse()
	testArgs := fmt.Sprintf("-test.v -test.count=%d -test.run=%s", *count, *run)
	if err := vmtest(*cache, testArgs, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "vmtest: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vmtest: "+format+"\n", args...)
}

func vmtest(cache, testArgs string, timeout time.Duration) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	qemu, err := ensureQemu()
	if err != nil {
		return err
	}
	vmlinuz, err := kernel(filepath.Join(root, cache))
	if err != nil {
		return err
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
	logf("built %s in %v; booting %s", filepath.Base(initrd), time.Since(start).Round(time.Millisecond), filepath.Base(vmlinuz))
	return boot(qemu, vmlinuz, initrd, testArgs, timeout)
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

// boot runs the VM, streams its console to stdout and reads the exit marker
// the guest's init prints before powering off. testArgs go to the e2e test
// binary (through the kernel command line, after "--").
func boot(qemu, vmlinuz, initrd, testArgs string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	appendArgs := "console=ttyS0 panic=-1 quiet -- " + testArgs
	cmd := exec.CommandContext(ctx, qemu,
		"-accel", "tcg,thread=single", "-smp", "2", "-m", "1G",
		"-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", vmlinuz, "-initrd", initrd, "-append", appendArgs)
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start qemu: %w", err)
	}
	code, passed := scanConsole(out, os.Stdout)
	werr := cmd.Wait()
	wall := time.Since(start).Round(100 * time.Millisecond)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the VM did not finish within %v (raise -timeout)", timeout)
	case code == "":
		return fmt.Errorf("the VM stopped without the exit marker after %v (qemu: %v): see the console log above", wall, werr)
	case code != "0":
		return fmt.Errorf("tests failed in the VM (exit %s, %v): see the console log above", code, wall)
	}
	logf("PASS: %d tests passed in the VM; boot plus tests took %v", passed, wall)
	return nil
}

var passLine = regexp.MustCompile(`^\s*--- PASS: (Test\S+)`)

// scanConsole copies the console to w and returns the marker's exit code
// ("" when missing) and the number of top-level tests that passed.
func scanConsole(r io.Reader, w io.Writer) (code string, passed int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintln(w, line)
		if i := strings.Index(line, marker); i >= 0 {
			code = strings.TrimSpace(line[i+len(marker):])
		}
		if m := passLine.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "/") {
			passed++
		}
	}
	return code, passed
}
