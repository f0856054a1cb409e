package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// Every examples/<name>/run.sh runs green with the probee under test, and
// its stdout has a line matching each regular expression of
// examples/<name>/expect, so the documented recipes cannot rot. A script
// exits 77 with "SKIP: reason" when a prerequisite is missing.
func TestExamples(t *testing.T) {
	testgate.Root(t)
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "run.sh"))
	if len(scripts) == 0 {
		t.Fatal("no examples/*/run.sh found")
	}
	for _, script := range scripts {
		dir := filepath.Dir(script)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			expect := readExpect(t, filepath.Join(dir, "expect"))
			out := runExample(t, script)
			lines := strings.Split(out, "\n")
			for _, re := range expect {
				if !slicesAny(lines, re.MatchString) {
					t.Errorf("no output line matches %q", re)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// runExample runs one script and returns its stdout. Exit 77 (the script's
// SKIP: a missing compiler) skips, except under PROBEE_REQUIRE_KERNEL=1;
// every other failure fails.
func runExample(t *testing.T, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Base(script))
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), "PROBEE="+probee)
	isolateMounts(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", script, err)
	}
	switch {
	case code == 0:
		return stdout.String()
	case code == 77 && !testgate.Required():
		t.Skip(lastLine(stderr.String()))
	}
	t.Fatalf("%s: exit %d\nstderr:\n%s\nstdout:\n%s", script, code, stderr.String(), stdout.String())
	return ""
}

// readExpect reads one regular expression per non-empty line.
func readExpect(t *testing.T, path string) []*regexp.Regexp {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("every example needs an expect file: %v", err)
	}
	var out []*regexp.Regexp
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, regexp.MustCompile(l))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no expectations", path)
	}
	return out
}

func slicesAny(s []string, f func(string) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
