// Package testgate gates privileged tests twice, in the manner of cilium/ebpf's
// testutils: a test that needs root or a kernel feature skips with a reason
// when it is missing, and when PROBEE_REQUIRE_KERNEL=1 (set by .ci/run) a skip
// for a feature the running kernel does have becomes a failure, so CI cannot
// silently stop running the root tests.
package testgate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// EnvRequire is the variable that turns unexpected skips into failures.
const EnvRequire = "PROBEE_REQUIRE_KERNEL"

// Required reports whether skips of available features must fail.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Root skips t unless the test runs as root. Under PROBEE_REQUIRE_KERNEL=1 a
// non-root run is a failure: CI is root.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if Required() {
		t.Fatalf("%s=1 but not running as root: run the tests as root", EnvRequire)
	}
	t.Skip("needs root (CAP_BPF, CAP_PERFMON): run as root")
}

// Feature skips t when err says the feature is missing. expected tells whether
// this kernel is known to have the feature (for example uprobe_multi on 6.6+);
// when it is and PROBEE_REQUIRE_KERNEL=1, the test fails instead of skipping.
func Feature(t testing.TB, name string, expected bool, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if expected && Required() {
		t.Fatalf("feature %s should be available on this kernel but is not: %v", name, err)
	}
	t.Skipf("feature %s not available: %v", name, err)
}

// KernelAtLeast reports whether the running kernel's release is major.minor
// or later: the expected argument of Feature for a feature that release
// brought (uprobe_multi: 6.6). It reports false when the release is
// unreadable.
func KernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	maj, min, ok := parseRelease(unix.ByteSliceToString(u.Release[:]))
	return ok && (maj > major || maj == major && min >= minor)
}

// parseRelease reads major and minor from a kernel release such as
// "6.1.0-28-amd64" or "6.18.44-fc".
func parseRelease(rel string) (major, minor int, ok bool) {
	maj, rest, found := strings.Cut(rel, ".")
	if !found {
		return 0, 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	major, err1 := strconv.Atoi(maj)
	minor, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return major, minor, true
}

// Missing skips t with reason when a feature the kernel is not expected to
// have (kprobes on the CI host) is absent. It never fails: such features are
// tested in the VM (make vmtest).
func Missing(t testing.TB, name, reason string) {
	t.Helper()
	t.Skipf("feature %s not available here (%s): tested by make vmtest", name, reason)
}

// Fixture returns path when it exists, and otherwise fails (under
// PROBEE_REQUIRE_KERNEL=1) or skips with the hint to build the fixtures.
func Fixture(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if Required() {
		t.Fatalf("fixture %s is missing: run make fixtures", path)
	}
	t.Skipf("fixture %s is missing: run make fixtures", path)
	return ""
}

// PrivateFixture returns a copy of fixture path, with the lib*.so files
// next to it (fixtures find them through RUNPATH $ORIGIN), in a temporary
// directory. Uprobes attach by inode: a test that probes the shared file
// without a pid filter would count the processes other test packages run
// from it at the same time, and gdb's breakpoint on an address another
// test has a uprobe on never stops (the uprobe takes the trap).
func PrivateFixture(t testing.TB, path string) string {
	t.Helper()
	path = Fixture(t, path)
	dir := t.TempDir()
	libs, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "lib*.so"))
	for _, src := range append(libs, path) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, filepath.Base(path))
}
