package procmaps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree is a fake root: files, and /proc/PID/root and map_files links.
type tree struct {
	t    *testing.T
	root string
}

func (f tree) write(name, data string) Mapping {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p+".tmp", []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil { // a new inode, as a package update
		f.t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		f.t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return Mapping{Start: 0x1000, End: 0x2000, Perms: "r-xp", Dev: StatDev(st.Dev), Inode: st.Ino, Path: name}
}

func (f tree) link(target, name string) {
	f.t.Helper()
	p := filepath.Join(f.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

// File opens a mapping's file by the path that names it, whichever view
// the path is in: the host's (a chroot in probee's mount namespace), the
// process's own (another mount namespace, where the host's file at that
// path is another build), or the mapping itself (map_files) when the path
// names another file now; never a path whose file is not the mapped one.
func TestFile(t *testing.T) {
	f := tree{t, t.TempDir()}
	host := f.write("/usr/lib/liba.so", "host build")
	f.link(f.root, "/proc/10/root")
	// pid 20 is chrooted at /srv/ctr in probee's mount namespace: maps
	// shows host paths.
	chroot := f.write("/srv/ctr/usr/lib/liba.so", "chroot build")
	f.link(filepath.Join(f.root, "srv/ctr"), "/proc/20/root")
	// pid 30 is in another mount namespace: maps shows its own paths.
	ctr := f.write("/ctr30/usr/lib/liba.so", "container build")
	ctr.Path = "/usr/lib/liba.so"
	f.link(filepath.Join(f.root, "ctr30"), "/proc/30/root")
	// pid 40 mapped a file deleted since; the path now holds another.
	old := f.write("/usr/lib/libold.so", "old")
	f.write("/usr/lib/libold.so", "new")
	old.Deleted = true
	f.link(f.root, "/proc/40/root")
	f.link(filepath.Join(f.root, "old-inode"), "/proc/40/map_files/1000-2000")
	f.write("/old-inode", "old") // stands for the deleted inode
	// pid 50 maps the host file, but maps shows another device (btrfs).
	otherDev := host
	otherDev.Dev = "ff:ff"

	tests := []struct {
		name string
		pid  int
		m    Mapping
		want string // "" wants an error
		kin  []int
	}{
		{"host process", 10, host, "/usr/lib/liba.so", nil},
		{"chroot: host path", 20, chroot, "/srv/ctr/usr/lib/liba.so", nil},
		{"other mount namespace: its own path", 30, ctr, "/proc/30/root/usr/lib/liba.so", nil},
		{"other mount namespace, gone", 31, ctr, "", nil},
		{"other mount namespace, gone: its living parent's root", 31, ctr, "/proc/30/root/usr/lib/liba.so", []int{30}},
		{"gone, a kin's root holds another file at the path", 31, ctr, "", []int{10, 20}},
		{"deleted, process alive: map_files", 40, old, "/proc/40/map_files/1000-2000", nil},
		{"deleted, process gone", 41, old, "", nil},
		{"device shown differently, process gone: inode", 50, otherDev, "/usr/lib/liba.so", nil},
		{"not a file", 10, Mapping{Start: 1, End: 2, Perms: "r-xp", Path: "[vdso]"}, "", nil},
		{"no inode", 10, Mapping{Start: 1, End: 2, Perms: "r-xp", Dev: host.Dev, Path: host.Path}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := File(f.root, tt.pid, tt.m, tt.kin...)
			switch {
			case tt.want == "" && err == nil:
				t.Errorf("File = %q, want an error", got)
			case tt.want == "":
				if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", tt.pid)) && tt.m.File() {
					t.Errorf("error %q does not name the pid", err)
				}
			case err != nil:
				t.Errorf("File: %v, want %s", err, tt.want)
			case got != filepath.Join(f.root, tt.want):
				t.Errorf("File = %q, want %q", got, filepath.Join(f.root, tt.want))
			}
		})
	}
}

// With the real root, a path is used as it is.
func TestFileRealRoot(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Read("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Exec() && m.Path == exe {
			if got, err := File("", os.Getpid(), m); err != nil || got != exe {
				t.Errorf("File(own executable) = %q, %v; want %q", got, err, exe)
			}
			return
		}
	}
	t.Skipf("%s is not mapped executable under that name", exe)
}
