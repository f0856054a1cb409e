package objfile

import (
	"flag"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

var update = flag.Bool("update", false, "rewrite the fuzz seeds in testdata/")

// llvmLib is a big C++ library (Debian's libllvm14: 34000 functions) for
// tests and benchmarks of the symbol scan, which skip it when missing.
const llvmLib = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

// systemLibs returns the files matching the name patterns in the
// standard library directories.
func systemLibs(patterns ...string) []string {
	var out []string
	for _, dir := range []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"} {
		for _, p := range patterns {
			m, _ := filepath.Glob(filepath.Join(dir, p))
			out = append(out, m...)
		}
	}
	return out
}

// fixture returns the path of a fixture binary, skipping when missing.
func fixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "tests", "fixtures", "bin", name))
	return testgate.Fixture(t, p)
}

// nameAt is the name and offset o gives address va (SymbolAt): "" and 0
// when no symbol covers it.
func nameAt(o *Object, va uint64) (raw string, off uint64) {
	if s, _ := o.SymbolAt(va); s != nil {
		return s.Name, va - s.Addr
	}
	return "", 0
}
