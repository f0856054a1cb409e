package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// probee -- CMD exits as the command did when the command ends by itself
// (issue 20), after writing every output; when tracing ends first, or
// probee fails, the code is probee's.
func TestCommandExitStatus(t *testing.T) {
	testgate.Root(t)
	chain := fixture(t, "chain-fp")
	stack := chain + ":leaf;chain-fp;_start;__libc_start_main;__libc_start_call_main;main;a;b;c;leaf"
	tests := []struct {
		name, script string
		extra        []string
		code         int
		stderr       string // a status line that must be there
		written      bool   // out.folded holds the 100 calls
	}{
		{"exit 0", "$CHAIN 100", nil, 0, "command exited with status 0", true},
		{"exit 3", "$CHAIN 100; exit 3", nil, 3, "command exited with status 3", true},
		{"SIGSEGV", "$CHAIN 100; kill -SEGV $$", nil, 139, "command was killed by signal segmentation fault", true},
		{"SIGKILL", "$CHAIN 100; kill -KILL $$", nil, 137, "command was killed by signal killed", true},
		{"stopped by -d", "$CHAIN 100; exec sleep 60", []string{"-d", "1s"}, 0, "tracing ended before it exited; it was killed by signal terminated", true},
		{"probee fails", "$CHAIN 100; rm -r out; exit 3", nil, 1, "-o out/out.folded", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "out"), 0o755)
			script := strings.ReplaceAll(tt.script, "$CHAIN", chain)
			args := append([]string{"--uprobe", chain + ":leaf", "-o", "out/out.folded"}, tt.extra...)
			r := run(t, dir, append(args, "--", "sh", "-c", script)...)
			if r.code != tt.code {
				t.Errorf("exit code %d, want %d", r.code, tt.code)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr lacks %q", tt.stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "out", "out.folded"))
			switch {
			case tt.written && (err != nil || folded(t, string(b))[stack] != 100):
				t.Errorf("out.folded: %v, want %d calls of %s:\n%s", err, 100, stack, b)
			case !tt.written && err == nil:
				t.Errorf("out.folded written although its directory was removed")
			}
		})
	}
}
