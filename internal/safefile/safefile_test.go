package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// readAll reads what f holds, through ReadAt.
func readAll(t *testing.T, f *File) string {
	t.Helper()
	b := make([]byte, 64)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return string(b[:n])
}

// Only regular files open, and nothing blocks: a FIFO no writer opens
// would hang a plain open for reading forever.
func TestOpenKinds(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/file", "data")
	if err := syscall.Mkfifo(dir+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "file", dir+"/link")
	symlink(t, "fifo", dir+"/fifolink")
	cases := []struct {
		path     string
		open     func(string) (*File, error)
		want     string // the contents, or "" for ErrNotRegular
		wantMiss bool
	}{
		{dir + "/file", Open, "data", false},
		{dir + "/link", Open, "data", false},
		{dir + "/link", OpenNoFollow, "", false},
		{dir + "/fifo", Open, "", false},
		{dir + "/fifolink", Open, "", false},
		{dir + "/fifo", OpenNoFollow, "", false},
		{dir, Open, "", false},
		{"/dev/null", Open, "", false},
		{dir + "/missing", Open, "", true},
	}
	for _, c := range cases {
		done := make(chan struct{})
		var f *File
		var err error
		go func() { f, err = c.open(c.path); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: open blocked", c.path)
		}
		switch {
		case c.wantMiss:
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %v, want not-exist", c.path, err)
			}
		case c.want == "":
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: %v, want ErrNotRegular", c.path, err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.path, err)
		default:
			if got := readAll(t, f); got != c.want {
				t.Errorf("%s: read %q, want %q", c.path, got, c.want)
			}
			f.Close()
		}
	}
}

// The kernel's links to a process's own files are followed, even by
// OpenNoFollow.
func TestOpenProcLinks(t *testing.T) {
	for _, p := range []string{"/proc/self/exe"} {
		for _, open := range []func(string) (*File, error){Open, OpenNoFollow} {
			f, err := open(p)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if f.Size == 0 {
				t.Errorf("%s: size 0", p)
			}
			f.Close()
		}
	}
}

// Reads stop at the size the file had when it was opened: a file that
// grows cannot make a reader read (and allocate) more.
func TestReadAtStopsAtSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	write(t, p, "1234")
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write(t, p, "12345678")
	b := make([]byte, 8)
	n, err := f.ReadAt(b, 0)
	if n != 4 || err != io.EOF || string(b[:n]) != "1234" {
		t.Errorf("ReadAt: %d %v %q, want 4 bytes and EOF", n, err, b[:n])
	}
	if n, err := f.ReadAt(b, 4); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at the end: %d %v", n, err)
	}
	if _, err := f.ReadAt(b, -1); err == nil {
		t.Error("negative offset accepted")
	}
}

// A path under a process's root resolves inside it: an absolute link in a
// chroot (its /tmp -> /real/tmp) is that root's /real/tmp, never the
// host's, and ".." stops at the root.
func TestOpenInRoot(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/real/tmp/perf-1.map", "inside")
	symlink(t, "/real/tmp", root+"/tmp")
	symlink(t, "/etc/hostname", root+"/real/tmp/escape")
	symlink(t, "../../../../../../etc/hostname", root+"/real/tmp/dotdot")
	f, err := OpenIn(root, "/tmp/perf-1.map", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, f); got != "inside" {
		t.Errorf("read %q, want the root's file", got)
	}
	f.Close()
	for _, name := range []string{"/tmp/escape", "/tmp/dotdot"} {
		if f, err := OpenIn(root, name, false); err == nil {
			t.Errorf("%s opened %s outside the root (%q)", name, f.Name, readAll(t, f))
			f.Close()
		}
	}
	if _, err := OpenIn(root, "/tmp/escape", true); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a link as the last component with noFollow: %v", err)
	}
}

// Open sends a /proc/PID/root path through OpenIn: the same file the
// process sees.
func TestOpenProcRoot(t *testing.T) {
	g, err := Open("/proc/self/root/etc/passwd")
	if err != nil {
		t.Skip(err)
	}
	defer g.Close()
	st, err := os.Stat("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	if g.Ino != st.Sys().(*syscall.Stat_t).Ino {
		t.Errorf("/proc/self/root/etc/passwd opened inode %d, want /etc/passwd's", g.Ino)
	}
}

// A file named beside a binary is opened without following links: a
// ".debug" linked to /etc does not open /etc's files.
func TestOpenBeneath(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/bin/.debug/app.debug", "debug")
	if err := os.MkdirAll(dir+"/evil", 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/etc", dir+"/evil/.debug")
	f, err := OpenBeneath(dir+"/bin", ".debug/app.debug")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err := OpenBeneath(dir+"/evil", ".debug/hostname"); err == nil {
		t.Errorf("opened %s through a link", f.Name)
		f.Close()
	}
	if f, err := OpenBeneath(dir+"/bin", "../bin/.debug/app.debug"); err == nil {
		t.Errorf("opened %s above the directory", f.Name)
		f.Close()
	}
}
