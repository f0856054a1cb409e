package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// result is one kernel's run.
type result struct {
	Kernel  release
	Image   string
	Wall    time.Duration
	Passed  []string // top-level tests
	Failed  []string
	Skipped []string
	Err     error // nil when the VM exited 0
}

// boot runs the VM of one kernel, streams its console to stdout with the
// kernel's version in front of every line and reads the exit marker the
// guest's init prints before powering off. testArgs go to the e2e test
// binary (through the kernel command line, after "--").
func boot(qemu, vmlinuz, initrd, testArgs string, timeout time.Duration, r release) result {
	res := result{Kernel: r, Image: vmlinuz}
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
		res.Err = err
		return res
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Err = fmt.Errorf("start qemu: %w", err)
		return res
	}
	code := scanConsole(out, os.Stdout, &res)
	werr := cmd.Wait()
	res.Wall = time.Since(start).Round(100 * time.Millisecond)
	switch {
	case ctx.Err() != nil:
		res.Err = fmt.Errorf("the VM did not finish within %v (raise -timeout)", timeout)
	case code == "":
		res.Err = fmt.Errorf("the VM stopped without the exit marker after %v (qemu: %v): see the console log above", res.Wall, werr)
	case code != "0":
		res.Err = fmt.Errorf("tests failed in the VM (exit %s, %v): see the console log above", code, res.Wall)
	}
	return res
}

var testLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (Test\S+)`)

// scanConsole copies the console to w, each line behind the kernel's
// version, records the top-level test results in res and returns the
// marker's exit code ("" when missing).
func scanConsole(r io.Reader, w io.Writer, res *result) (code string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		fmt.Fprintf(w, "[%s] %s\n", res.Kernel.Version, line)
		if i := strings.Index(line, marker); i >= 0 {
			code = strings.TrimSpace(line[i+len(marker):])
		}
		m := testLine.FindStringSubmatch(line)
		if m == nil || strings.Contains(m[2], "/") {
			continue
		}
		switch m[1] {
		case "PASS":
			res.Passed = append(res.Passed, m[2])
		case "FAIL":
			res.Failed = append(res.Failed, m[2])
		case "SKIP":
			res.Skipped = append(res.Skipped, m[2])
		}
	}
	return code
}

// summarize prints one line per kernel and test result and fails when a
// kernel failed.
func summarize(results []result) error {
	var bad []string
	for _, r := range results {
		k := r.Kernel.Version
		for _, t := range r.Passed {
			logf("%s PASS %s", k, t)
		}
		for _, t := range r.Skipped {
			logf("%s SKIP %s", k, t)
		}
		for _, t := range r.Failed {
			logf("%s FAIL %s", k, t)
		}
		if r.Err == nil && len(r.Failed) > 0 {
			r.Err = fmt.Errorf("%d tests failed", len(r.Failed))
		}
		if r.Err != nil {
			logf("FAIL: kernel %s (%s): %v", k, r.Kernel.Suite, r.Err)
			bad = append(bad, k)
			continue
		}
		logf("PASS: kernel %s (%s): %d tests passed, %d skipped; boot plus tests took %v", k, r.Kernel.Suite, len(r.Passed), len(r.Skipped), r.Wall)
	}
	if len(bad) > 0 {
		return fmt.Errorf("tests failed on kernel %s", strings.Join(bad, ", "))
	}
	return nil
}
