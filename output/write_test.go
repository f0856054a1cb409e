package output

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	if err := Write(smallProfile(), dests, Options{}); err != nil {
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

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.folded")
	os.WriteFile(file, nil, 0o644)
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	tests := []struct {
		dests []string
		want  string // substring of the error, "" for none
	}{
		{[]string{filepath.Join(dir, "a.folded"), filepath.Join(dir, "a.SVG"), filepath.Join(dir, "a.pb.gz")}, ""},
		{[]string{filepath.Join(dir, "a.collapsed"), dir, filepath.Join(dir, "new", "deeper") + "/"}, ""},
		{[]string{"out.txt"}, `-o out.txt: unknown output extension ".txt": use .folded, .collapsed, .svg, .pb.gz or a directory ending in /`},
		{[]string{"out"}, "-o out: no output extension: use .folded"},
		{[]string{"x.gz"}, `unknown output extension ".gz"`},
		{[]string{""}, "-o: empty path"},
		{[]string{filepath.Join(dir, "nodir", "a.svg")}, "does not exist: create it first"},
		{[]string{filepath.Join(file, "a.svg")}, "is not a directory"},
		{[]string{filepath.Join(file, "sub") + "/"}, "is not a directory"},
		{[]string{filepath.Join(dir, "a.svg"), filepath.Join(dir, ".", "a.svg")}, "same destination"},
	}
	if os.Geteuid() != 0 { // root writes anywhere
		tests = append(tests, struct {
			dests []string
			want  string
		}{[]string{filepath.Join(ro, "a.svg")}, "choose a writable directory"})
	}
	for _, tt := range tests {
		err := Check(tt.dests)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%q): %v", tt.dests, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%q) = %v, want an error containing %q", tt.dests, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("Check created a directory")
	}
	assertNoTemp(t, dir)
}

func TestCheckReadOnlyFS(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc")
	}
	err := Check([]string{"/proc/self/x.svg"})
	if err == nil || !strings.Contains(err.Error(), "-o /proc/self/x.svg: cannot write in /proc/self") {
		t.Errorf("Check on /proc: %v, want cannot write", err)
	}
}

// TestWriteLeavesNothingOnError makes the last output fail after the
// others were rendered and checks that no file or directory appears.
func TestWriteLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	p := smallProfile()
	tx := &txn{}
	d, _ := parseDest(filepath.Join(dir, "made", "sub") + "/")
	if err := writeDest(tx, p, d, Options{}, Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	bad := dest{arg: "bad.svg", path: filepath.Join(dir, "missing", "bad.svg"), kind: destSVG}
	if err := writeDest(tx, p, bad, Options{}, Options{}); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	tx.rollback()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left behind after a failed write: %v", entries)
	}
}
