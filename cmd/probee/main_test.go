package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/testgate"
)

func TestMain(m *testing.M) {
	// Trace tests keep their unwind table cache here, not in ~/.cache.
	cache, err := os.MkdirTemp("", "probee-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// probee runs the CLI in-process and returns stdout, stderr and the exit code.
func probee(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := exitCode(run(context.Background(), args, &out, &errb), &errb)
	return out.String(), errb.String(), code
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--list-probes", "malloc+"}, "--list-probes 'malloc+': 1:8: missing offset after '+'"},
		{[]string{"--uprobe", "malloc+0xZZ"}, `--uprobe 'malloc+0xZZ': 1:8: invalid offset "0xZZ": want decimal or 0x-hex`},
		{[]string{"--uprobe", "kprobe:vfs_read"}, "--uprobe 'kprobe:vfs_read'"},
		{[]string{"--tracepoint", "sched"}, "--tracepoint 'sched'"},
		{[]string{"--usdt", "ret:fx:gated"}, "--usdt 'ret:fx:gated': 1:1: unexpected ret: in a USDT probe"},
		{[]string{"--usdt", "kprobe:vfs_read"}, `--usdt 'kprobe:vfs_read': 1:1: kind "kprobe" contradicts --usdt`},
		{[]string{"--usdt", "a:b:c:d"}, "--usdt 'a:b:c:d': 1:6: too many parts"},
		{[]string{}, "nothing to trace"},
		{[]string{"--nope"}, "unknown flag --nope (see probee --help)"},
		{[]string{"--uprbe", "malloc"}, "unknown flag --uprbe (did you mean --uprobe?)"},
		{[]string{"--uprobe", "malloc", "--samples"}, "unknown flag --samples (did you mean --sample?)"},
		{[]string{"--uprobe", "malloc", "--max-stack", "9"}, "unknown flag --max-stack (did you mean --max-stacks?)"},
		{[]string{"-p", "x", "--uprobe", "malloc"}, `invalid pid "x"`},
		{[]string{"--uprobe", "malloc", "-p", "1", "--", "true"}, "not both"},
		{[]string{"--uprobe", "malloc", "ls"}, "put the command to trace after --"},
		{[]string{"libc:malloc", "--", "./app"}, `unexpected argument "libc:malloc": give a probe with its flag, e.g. probee --uprobe 'libc:malloc' -- CMD (or list its targets: probee --list-probes 'libc:malloc')`},
		{[]string{"--uprobe", "malloc", "--unwind", "magic"}, `invalid value "magic" for --unwind: want fp, dwarf or auto`},
		{[]string{"--uprobe", "malloc", "--unwind-budget", "lots"}, `invalid value "lots" for --unwind-budget: want a size such as 512M`},
		{[]string{"--uprobe", "malloc", "--unwind-budget", "0"}, `invalid value "0" for --unwind-budget`},
		{[]string{"--uprobe", "malloc", "--unwind-budget", "20G"}, `invalid value "20G" for --unwind-budget: more than 16G`},
		{[]string{"--uprobe", "malloc", "-d", "soon"}, `invalid value "soon" for -d: want a duration such as 5s, 500ms or 2m`},
		{[]string{"--uprobe", "malloc", "-d", "5"}, `invalid value "5" for -d: a duration needs its unit, such as 5s or 5ms`},
		{[]string{"--uprobe", "malloc", "-F", "99", "-F", "199"}, `invalid value "199" for -F: -F 99 was given already: give it once`},
		{[]string{"--uprobe", "malloc", "-F", "99", "--frequency", "199"}, `invalid value "199" for --frequency: -F 99 was given already`},
		{[]string{"--uprobe", "malloc", "-p", "1", "-p", "2"}, `invalid value "2" for -p: -p 1 was given already: give it once`},
		{[]string{"--uprobe", "malloc", "--push-token", "a", "--push-token", "b"}, `invalid value (not shown) for --push-token: --push-token was given already: give it once`},
		{[]string{"--uprobe", "malloc", "--max-stacks", "0"}, `invalid value "0" for --max-stacks: want a number of stacks from 1 to 1073741824`},
		{[]string{"--uprobe", "malloc", "--max-stacks", "-1"}, `invalid value "-1" for --max-stacks: want a number of stacks from 1`},
		{[]string{"--uprobe", "malloc", "--max-stacks", "many"}, `invalid value "many" for --max-stacks`},
		{[]string{"--uprobe", "malloc", "--max-stacks", "2000000000"}, `invalid value "2000000000" for --max-stacks`},
		{[]string{"--uprobe", "malloc", "--max-stacks", "100000000", "--", "true"}, "--max-stacks 100000000: its maps take up to 634.4 GiB of kernel memory when full"},
		{[]string{"--uprobe", "malloc", "-F", "0"}, "-F 0"},
		{[]string{"--uprobe", "malloc", "--interval", "5ms"}, "--interval 5ms: want 0 (drain only at the end) or a period of at least 10ms"},
		{[]string{"--uprobe", "malloc", "--interval", "-2s"}, "--interval -2s"},
		{[]string{"--uprobe", "malloc", "-o", "x.txt"}, `unknown output extension ".txt"`},
		{[]string{"--json", "--uprobe", "malloc"}, "--json only applies to --list-probes"},
		{[]string{"--list-probes", "malloc", "--uprobe", "free"}, "--list-probes only lists"},
		{[]string{"--uprobe", "malloc", "--", "./no-such-command"}, `command "./no-such-command" not found: check its path`},
		{[]string{"--uprobe", "malloc", "--", "no-such-command"}, `command "no-such-command" not found in $PATH: check the name or give its path (e.g. ./no-such-command)`},
		{[]string{"--uprobe", "malloc", "--", "/etc/passwd"}, `command "/etc/passwd" is not executable (mode -rw-r--r--): chmod +x it, or run it through its interpreter`},
		{[]string{"--uprobe", "malloc", "--", "/etc"}, `command "/etc" is a directory: give the program to run`},
	}
	for _, c := range cases {
		out, errs, code := probee(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("probee %q: exit %d, stderr %q, stdout %q; want exit 2 and %q", c.args, code, errs, out, c.want)
		}
	}
}

// -o refuses a symbolic link, to a directory or a file, before anything
// starts (the link might be another user's): exit 2, the link named.
func TestOutputLinkRefused(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.Mkdir(victim, 0o755)
	os.WriteFile(filepath.Join(dir, "f.svg"), nil, 0o644)
	os.Symlink(victim, filepath.Join(dir, "y.svg"))
	os.Symlink(filepath.Join(dir, "f.svg"), filepath.Join(dir, "l.svg"))
	for link, want := range map[string]string{
		"y.svg": "is a symbolic link to the directory " + victim + ": probee does not write through links",
		"l.svg": "is a symbolic link to " + dir + "/f.svg: probee does not write through links",
	} {
		path := filepath.Join(dir, link)
		out, errs, code := probee(t, "--uprobe", "malloc", "-o", path, "--", "true")
		if code != 2 || !strings.HasPrefix(errs, "probee: -o "+path+": "+want) || out != "" {
			t.Errorf("-o %s: exit %d, stderr %q; want exit 2 and %q", path, code, errs, want)
		}
	}
	if left, _ := os.ReadDir(victim); len(left) != 0 {
		t.Errorf("wrote into %s: %v", victim, left)
	}
}

// Each of the errors joined in one (every output that failed) gets its
// own "probee: " line.
func TestPrintErrorJoined(t *testing.T) {
	var b bytes.Buffer
	err := errors.Join(errors.New("-o a.svg: write a.svg: no space left on device"), errors.New("-o b/: write b/x: i/o error"))
	if code := exitCode(err, &b); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := "probee: -o a.svg: write a.svg: no space left on device\nprobee: -o b/: write b/x: i/o error\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}

// --interval: default 1s, 0 turns periodic drains off.
func TestIntervalFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want time.Duration
		on   bool
	}{
		{nil, time.Second, false},
		{[]string{"--interval", "0"}, 0, true},
		{[]string{"--interval", "250ms"}, 250 * time.Millisecond, true},
	} {
		cfg, err := parseArgs(append([]string{"--uprobe", "malloc"}, c.args...), io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.interval != c.want || cfg.intervalOn != c.on {
			t.Errorf("%q: interval %v (given %v), want %v (%v)", c.args, cfg.interval, cfg.intervalOn, c.want, c.on)
		}
	}
}

func TestCaretMessage(t *testing.T) {
	_, errs, _ := probee(t, "--list-probes", "malloc+0xZZ")
	want := "probee: --list-probes 'malloc+0xZZ': 1:8: invalid offset \"0xZZ\": want decimal or 0x-hex\nmalloc+0xZZ\n       ^\n"
	if errs != want {
		t.Errorf("stderr:\n%q\nwant:\n%q", errs, want)
	}
}

func TestListProbesFixture(t *testing.T) {
	bin, _ := filepath.Abs(testgate.Fixture(t, "../../tests/fixtures/bin/chain-fp"))
	out, errs, code := probee(t, "--list-probes", bin+":regex:^foo_")
	want := "uprobe:" + bin + ":foo_one\nuprobe:" + bin + ":foo_two\n"
	if code != 0 || out != want {
		t.Errorf("exit %d stderr %q\nstdout %q\nwant   %q", code, errs, out, want)
	}
	out, _, code = probee(t, "--list-probes", bin+":leaf", "--json")
	if code != 0 || !strings.Contains(out, `"symbol":"leaf"`) {
		t.Errorf("--json: exit %d, %q", code, out)
	}
	_, errs, code = probee(t, "--list-probes", bin+":lefa")
	if code != 1 || !strings.Contains(errs, "did you mean: leaf") {
		t.Errorf("no match: exit %d, %q", code, errs)
	}
}

func TestKprobeOnThisHost(t *testing.T) {
	if bpf.HaveKprobes() {
		t.Skip("this kernel has kprobes: the missing-kprobes message is tested where they are missing")
	}
	_, errs, code := probee(t, "--kprobe", "vfs_read", "-d", "1s")
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "probee: kprobes are not available on this kernel (CONFIG_KPROBES is not set): try --tracepoint") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
