package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	makeTargetRE = regexp.MustCompile(`(?m)^\$\(BIN\)/([^:\s]+):`)
	readmeRowRE  = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
)

// TestFixturesREADME checks that the fixtures README's table has one row per
// binary the fixtures Makefile has a rule for, and no other.
func TestFixturesREADME(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "tests", "fixtures")
	built := matches(t, filepath.Join(dir, "Makefile"), makeTargetRE)
	listed := matches(t, filepath.Join(dir, "README.md"), readmeRowRE)
	for _, name := range sorted(built) {
		if !listed[name] {
			t.Errorf("tests/fixtures/README.md: no row for %s, which the Makefile builds", name)
		}
	}
	for _, name := range sorted(listed) {
		if !built[name] {
			t.Errorf("tests/fixtures/README.md: row %s, which the Makefile does not build", name)
		}
	}
	if t.Failed() {
		t.Logf("Makefile builds: %s", strings.Join(sorted(built), " "))
	}
}

// matches returns the first submatch of every match of re in the file.
func matches(t *testing.T, path string, re *regexp.Regexp) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatalf("%s: nothing matches %s", path, re)
	}
	return out
}

func sorted(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
