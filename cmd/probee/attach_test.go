package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/testgate"
)

// --no-uprobe-multi turns off uprobe_multi links only, --no-kprobe-multi
// kprobe_multi links only.
func TestNoMultiFlags(t *testing.T) {
	for _, c := range []struct {
		flags          []string
		noUprobe, noKp bool
	}{
		{nil, false, false},
		{[]string{"--no-uprobe-multi"}, true, false},
		{[]string{"--no-kprobe-multi"}, false, true},
		{[]string{"--no-kprobe-multi", "--no-uprobe-multi"}, true, true},
	} {
		cfg, err := parseArgs(append([]string{"--uprobe", "malloc"}, c.flags...), io.Discard)
		if err != nil || cfg.noUprobeMulti != c.noUprobe || cfg.noKprobeMulti != c.noKp {
			t.Errorf("%q: no uprobe_multi %v, no kprobe_multi %v (%v); want %v, %v",
				c.flags, cfg.noUprobeMulti, cfg.noKprobeMulti, err, c.noUprobe, c.noKp)
		}
	}
}

// The attach line says when uprobes went through uprobe_multi links:
// --no-kprobe-multi leaves them on, --no-uprobe-multi turns them off.
func TestUprobeMultiStatus(t *testing.T) {
	testgate.Root(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, "../../tests/fixtures/bin/chain-fp"))
	for _, c := range []struct {
		flag  string
		multi bool
	}{
		{"--no-kprobe-multi", bpf.HaveUprobeMulti()}, // kernels before 6.6 have no uprobe_multi
		{"--no-uprobe-multi", false},
	} {
		_, errs, code := probee(t, "--uprobe", bin+":leaf", c.flag, "-o", filepath.Join(t.TempDir(), "x.folded"), "--", "true")
		if code != 0 || !strings.Contains(errs, "attached 1 uprobe") || strings.Contains(errs, "(uprobe_multi)") != c.multi {
			t.Errorf("%s: exit %d, stderr %q; want uprobe_multi %v", c.flag, code, errs, c.multi)
		}
	}
}

// A trace run in-process (as these tests do) starts its watchdog: the
// test binary, started again with bpf.WatchdogArg, is the watchdog, not
// another run of these tests.
func TestWatchdogInTests(t *testing.T) {
	testgate.Root(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, "../../tests/fixtures/bin/chain-fp"))
	_, errs, code := probee(t, "--uprobe", bin+":leaf", "-o", filepath.Join(t.TempDir(), "x.folded"), "--", "true")
	if code != 0 || strings.Contains(errs, "watchdog") {
		t.Errorf("exit %d, stderr %q; want exit 0 and no word of the watchdog", code, errs)
	}
}

// A run whose profiles could all not be pushed (nothing listens) fails,
// after writing its local outputs.
func TestPushNothingSent(t *testing.T) {
	testgate.Root(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, "../../tests/fixtures/bin/chain-fp"))
	out := filepath.Join(t.TempDir(), "x.folded")
	_, errs, code := probee(t, "--uprobe", bin+":leaf", "--push", "pyroscope://127.0.0.1:1", "--push-flush-timeout", "1s",
		"-o", out, "--", bin, "10")
	if _, err := os.Stat(out); code != 1 || !strings.Contains(errs, "push: none of 1 profile could be sent to http://127.0.0.1:1") || err != nil {
		t.Errorf("exit %d, output %v, stderr %q; want exit 1, the output written and no profile sent", code, err, errs)
	}
}
