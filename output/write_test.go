package output

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestFileNames(t *testing.T) {
	tests := []struct {
		labels []string
		want   []string
	}{
		{[]string{"uprobe:libc:malloc"}, []string{"uprobe_libc_malloc"}},
		{[]string{"uprobe:/usr/lib/libc.so.6:malloc"}, []string{"uprobe_usr_lib_libc.so.6_malloc"}},
		{[]string{"uprobe:./fx:leaf", "uprobe:../fx:leaf"}, []string{"uprobe_fx_leaf", "uprobe_fx_leaf-2"}},
		{[]string{"uprobe:libc:*", "uprobe:libc:?", "uprobe libc"}, []string{"uprobe_libc", "uprobe_libc-2", "uprobe_libc-3"}},
		{[]string{"x", "x-2", "X*"}, []string{"x", "x-2", "X-3"}},
		{[]string{"uprobe:'regex:^foo_'"}, []string{"uprobe_regex_foo"}},
		{[]string{"..", "", "***"}, []string{"probe", "probe-2", "probe-3"}},
		{[]string{"uprobe:fx:{a,b}"}, []string{"uprobe_fx_a,b"}},
		{[]string{"uprobe:λ:ünï"}, []string{"uprobe_n"}},
		{[]string{strings.Repeat("a", 300)}, []string{strings.Repeat("a", maxNameLen)}},
	}
	for _, tt := range tests {
		if got := FileNames(tt.labels); !slices.Equal(got, tt.want) {
			t.Errorf("FileNames(%q) = %q, want %q", tt.labels, got, tt.want)
		}
	}
}

func TestWriteStdout(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(smallProfile(), nil, Options{Stdout: &buf}); err != nil {
		t.Fatal(err)
	}
	golden(t, "small-probe.folded", buf.Bytes()) // combined: probe label as root
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out") + "/"
	dests := []string{filepath.Join(dir, "all.folded"), filepath.Join(dir, "all.collapsed"),
		filepath.Join(dir, "all.svg"), filepath.Join(dir, "all.pb.gz"), out}
	if err := Write(smallProfile(), plan(t, dests...), Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "small-probe.folded", read(t, dests[0]))
	golden(t, "small-probe.folded", read(t, dests[1]))
	checkSVG(t, read(t, dests[2]))
	if b := read(t, dests[3]); !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Error("pprof output not gzipped")
	}
	golden(t, "dir-index.txt", read(t, filepath.Join(out, "index.txt")))
	golden(t, "dir-uprobe_libc_malloc.folded", read(t, filepath.Join(out, "uprobe_libc_malloc.folded")))
	if b := read(t, filepath.Join(out, "uprobe_fx_never_called.folded")); len(b) != 0 {
		t.Errorf("zero-hit probe folded file not empty: %q", b)
	}
	if b := read(t, filepath.Join(out, "uprobe_fx_never_called.svg")); !bytes.Contains(b, []byte("no samples")) {
		t.Error("zero-hit probe SVG does not say no samples")
	}
	for _, f := range []string{"uprobe_libc_malloc.svg", "tracepoint_syscalls_sys_enter_openat.svg"} {
		checkSVG(t, read(t, filepath.Join(out, f)))
	}
	if b := read(t, filepath.Join(out, "index.html")); !bytes.Contains(b, []byte(`<a href="uprobe_libc_malloc.svg">`)) {
		t.Errorf("index.html lacks the link:\n%s", b)
	}
	assertNoTemp(t, dir)
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertNoTemp fails when a temporary or check file is left under dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if strings.HasPrefix(d.Name(), ".") && path != dir {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
}

// plan is Plan(dests) in a test, closed when it ends.
func plan(t *testing.T, dests ...string) *Dests {
	t.Helper()
	ds, err := Plan(dests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ds.Close)
	return ds
}

// A destination that cannot be written (here files over 2 KiB, past
// RLIMIT_FSIZE: EFBIG, as ENOSPC would be) is reported and leaves no file
// behind, an older file there as it was; the others are still written.
func TestWriteFailureKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	small, big, bigDir := filepath.Join(dir, "small.folded"), filepath.Join(dir, "big.svg"), filepath.Join(dir, "new", "sub")+"/"
	os.WriteFile(big, []byte("old"), 0o644)
	ds := plan(t, big, small, bigDir)
	limitFileSize(t, 2048)
	err := Write(smallProfile(), ds, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"-o " + big + ": write " + big + ": file too large", "-o " + bigDir + ": write "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want %q in it", err, want)
		}
	}
	if strings.Contains(err.Error(), "tmp-") || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("error %q: want one line per failed destination, no temporary names", err)
	}
	golden(t, "small-probe.folded", read(t, small))
	if b := read(t, big); string(b) != "old" {
		t.Errorf("the older %s was changed: %.40q", big, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the failed directory output's directories were left behind")
	}
	assertNoTemp(t, dir)
}

// limitFileSize sets RLIMIT_FSIZE to n bytes for the test (SIGXFSZ
// ignored: writes past it fail with EFBIG).
func limitFileSize(t *testing.T, n uint64) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		signal.Reset(syscall.SIGXFSZ)
	})
}

// Collapsed stacks to a full stdout fail.
func TestWriteStdoutFull(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if err := Write(smallProfile(), nil, Options{Stdout: f}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing to /dev/full: %v, want ENOSPC", err)
	}
}
