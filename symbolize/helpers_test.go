package symbolize

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// fixture returns the path of a fixture binary, skipping when missing.
func fixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "tests", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

func uspec(target probespec.Target, kind probespec.MatcherKind, pattern string) probespec.Spec {
	return probespec.Spec{Kind: probespec.Uprobe, Target: target, Matcher: probespec.Matcher{Kind: kind, Pattern: pattern}}
}

func pathT(p string) probespec.Target { return probespec.Target{Kind: probespec.TargetPath, Name: p} }
func libT(n string) probespec.Target  { return probespec.Target{Kind: probespec.TargetLib, Name: n} }

// resolveOK resolves spec on this machine or fails the test: the places
// the tests symbolize.
func resolveOK(t *testing.T, spec probespec.Spec) []resolver.Target {
	t.Helper()
	ts, err := resolver.Resolve(spec, resolver.Scope{})
	if err != nil {
		t.Fatalf("Resolve(%+v): %v", spec, err)
	}
	return ts
}

// statSame reports whether a and b name the same file.
func statSame(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// installFixture copies fixture binary name to dst, creating its directory.
func installFixture(t *testing.T, name, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// fileMapping is an executable mapping of the whole file at path (file
// offset 0) from start, named name as /proc/PID/maps would show it.
func fileMapping(t *testing.T, path, name string, start uint64) procmaps.Mapping {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return procmaps.Mapping{Start: start, End: start + uint64(fi.Size()), Perms: "r-xp",
		Dev: procmaps.StatDev(st.Dev), Inode: st.Ino, Path: name}
}

// mapsLine is m as a line of /proc/PID/maps (file offset 0).
func mapsLine(m procmaps.Mapping) string {
	return fmt.Sprintf("%x-%x r-xp 00000000 %s %d %s\n", m.Start, m.End, m.Dev, m.Inode, m.Path)
}

// funcFileOffset is the file offset of function fn in the ELF file at path.
func funcFileOffset(t *testing.T, path, fn string) uint64 {
	t.Helper()
	o, err := objfile.LoadObject(path, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range o.Funcs {
		if f.Name == fn {
			if off, ok := o.FileOffset(f.Addr); ok {
				return off
			}
		}
	}
	t.Fatalf("no %s in %s", fn, path)
	return 0
}
