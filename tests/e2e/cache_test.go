package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/testgate"
)

// runCached runs probee with its unwind table cache under cacheHome
// (XDG_CACHE_HOME), in a private mount namespace as run does.
func runCached(t *testing.T, cacheHome string, args ...string) result {
	t.Helper()
	return runEnv(t, "XDG_CACHE_HOME="+cacheHome, args...)
}

// tableSources reads the status line that says how many unwind tables
// were built and how many loaded from the table cache.
func tableSources(t *testing.T, stderr string) (built, loaded int) {
	t.Helper()
	line := firstLine(stderr, "unwind tables built:")
	var ms1, ms2 float64
	var dir string
	if _, err := fmt.Sscanf(line, "probee: unwind tables built: %d in %f ms; loaded from the table cache: %d in %f ms (%s",
		&built, &ms1, &loaded, &ms2, &dir); err != nil {
		t.Fatalf("table sources line %q: %v", line, err)
	}
	return built, loaded
}

// The on-disk unwind table cache, with DWARF unwinding of a program built
// without frame pointers: the first run builds its three tables (the
// program's, ld.so's, libc's) and saves them under XDG_CACHE_HOME, the
// second builds none and loads them, with the same complete stacks. A
// cache file truncated or with a byte flipped is warned about, that table
// alone is built again, the stacks stay complete, and the file is
// rewritten whole. --no-table-cache builds every table.
func TestTableCache(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-nofp")
	id, err := fileid.OfPath(bin)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	dir := filepath.Join(home, "probee", "unwind")
	file := filepath.Join(dir, id.Key()+".unwind")
	args := []string{"--unwind", "dwarf", "--uprobe", bin + ":leaf", "--", bin, "100"}
	size := 0
	for _, c := range []struct {
		name          string
		damage        func(data []byte) []byte
		built, loaded int
		flags         []string
	}{
		{name: "first run", built: 3},
		{name: "second run", built: 0, loaded: 3},
		{name: "truncated", damage: func(b []byte) []byte { return b[:len(b)/2] }, built: 1, loaded: 2},
		{name: "byte flipped", damage: func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, built: 1, loaded: 2},
		{name: "no cache", flags: []string{"--no-table-cache"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.damage != nil {
				damage(t, file, c.damage)
			}
			r := runCached(t, home, append(c.flags, args...)...)
			checkChain(t, r, 100)
			warned := strings.Contains(r.stderr, "warning: unwind table cache: "+file)
			if warned != (c.damage != nil) {
				t.Errorf("warning about the cache file: %v, want %v", warned, c.damage != nil)
			}
			if c.flags != nil {
				if !strings.Contains(r.stderr, "(table cache off)") {
					t.Error("no status line saying the table cache is off")
				}
				return
			}
			if built, loaded := tableSources(t, r.stderr); built != c.built || loaded != c.loaded {
				t.Errorf("%d tables built, %d loaded from the cache; want %d built, %d loaded", built, loaded, c.built, c.loaded)
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatalf("no cache file for the program: %v", err)
			}
			if size == 0 {
				size = int(fi.Size())
			} else if int(fi.Size()) != size {
				t.Errorf("cache file of %d bytes, want it whole (%d)", fi.Size(), size)
			}
		})
	}
}

// damage rewrites the file at path with edit.
func damage(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// checkChain checks that a chain-nofp run at leaf exited 0 with n hits,
// every stack complete from _start to leaf.
func checkChain(t *testing.T, r result, n uint64) {
	t.Helper()
	stacks := folded(t, r.stdout)
	if got := total(stacks); got != n || r.code != 0 {
		t.Fatalf("exit %d, %d hits; want 0 and %d", r.code, got, n)
	}
	for st := range stacks {
		if !strings.Contains(st, ";_start;") || !strings.HasSuffix(st, ";main;a;b;c;leaf") || strings.Contains(st, "[truncated]") {
			t.Errorf("stack %q, want it complete from _start to leaf", st)
		}
	}
}
