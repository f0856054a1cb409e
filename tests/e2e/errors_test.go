package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// Bad input: one-line error naming the fix, the right exit code, no output
// files left behind, no uprobe events leaked into tracefs.
func TestBadInput(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	cases := []struct {
		name string
		args []string
		code int
		want string // substring of the error line
	}{
		{"unknown library", []string{"--uprobe", "nosuchlib:foo"}, 1, `library "nosuchlib" not found`},
		{"no matching symbol", []string{"--uprobe", bin + ":mallco"}, 1, `no function matches "mallco"`},
		{"nonexistent pid", []string{"--uprobe", "libc:malloc", "-p", "999999"}, 2, "no process with pid 999999"},
		{"command not found", []string{"--uprobe", "libc:malloc", "--", "./no-such-cmd"}, 2, `command "./no-such-cmd" not found`},
		{"unwritable -o", []string{"--uprobe", bin + ":leaf", "-o", "/proc/nope/x.folded", "--", bin, "1"}, 2, "/proc/nope"},
		{"bad extension", []string{"--uprobe", bin + ":leaf", "-o", "out.txt", "--", bin, "1"}, 2, `unknown output extension ".txt"`},
		{"bad spec", []string{"--uprobe", "malloc+0xZZ"}, 2, `1:8: invalid offset "0xZZ"`},
		{"unknown flag", []string{"--frobnicate"}, 2, "unknown flag --frobnicate"},
		{"flag mistyped", []string{"--uprbe", "malloc"}, 2, "unknown flag --uprbe (did you mean --uprobe?)"},
		{"nothing to trace", []string{"-d", "1s"}, 2, "nothing to trace"},
		{"pid and command", []string{"--uprobe", "malloc", "-p", "1", "--", "true"}, 2, "not both"},
		{"max-stacks 0", []string{"--uprobe", bin + ":leaf", "--max-stacks", "0", "--", bin, "1"}, 2, `invalid value "0" for --max-stacks: want a number of stacks from 1`},
		{"max-stacks past memory", []string{"--uprobe", bin + ":leaf", "--max-stacks", "100000000", "--", bin, "1"}, 2,
			"--max-stacks 100000000: its maps take up to 634.4 GiB of kernel memory when full (and the unwind tables up to 256.0 MiB), more than half of the"},
	}
	before := uprobeEvents(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := run(t, dir, c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d", r.code, c.code)
			}
			first := strings.SplitN(r.stderr, "\n", 2)[0]
			if !strings.HasPrefix(first, "probee: ") || !strings.Contains(first, c.want) {
				t.Errorf("stderr first line %q, want %q in it", first, c.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
	if after := uprobeEvents(t); after != before {
		t.Errorf("uprobe_events changed:\nbefore %q\nafter  %q", before, after)
	}
}

// Without root, probee names the capabilities and exits 1 before starting
// the command.
func TestNotRoot(t *testing.T) {
	testgate.Root(t) // root is needed to drop to nobody
	bin := fixture(t, "chain-fp")
	dir, err := os.MkdirTemp("", "probee-notroot") // reachable by nobody
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	marker := filepath.Join(dir, "ran")
	r := runAs(t, dir, 65534, "--uprobe", bin+":leaf", "--", "sh", "-c", "touch "+marker)
	if r.code != 1 || !strings.Contains(r.stderr, "CAP_BPF") {
		t.Errorf("exit %d stderr %q: want exit 1 naming CAP_BPF", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although nothing could be attached")
	}
}

func uprobeEvents(t *testing.T) string {
	b, err := os.ReadFile("/sys/kernel/tracing/uprobe_events")
	if err != nil {
		b, _ = os.ReadFile("/sys/kernel/debug/tracing/uprobe_events")
	}
	return string(b)
}
