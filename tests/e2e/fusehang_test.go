package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/probee/probee/tests/hostile"
	"golang.org/x/sys/unix"
)

// Case (requirement 2, never block on a path): nobody maps a .so from a
// FUSE file system nobody serves for others (allow_other: fusermount3
// with user_allow_other in /etc/fuse.conf). The server answers the first
// open of the file (hostile-mapper's, which maps it and runs its stub
// from the pages read then) and never another request for it. Once a
// server has taken a request, the kernel waits for its answer without
// letting any signal end the wait, SIGKILL included: probee's time budget
// per file let the run finish, but its stuck threads kept the process
// from ever exiting (a zombie until the server answered). probee must
// not touch the file at all, say so naming it, exit 0 with its outputs
// within -d + hostileSlack. The server is the test process, the mount
// nobody's (user_id=65534): what fusermount3 would make.
func TestHostileFUSEHang(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	files := map[string]*hangFile{}
	runHostile(t, hostileCase{
		setup: func(t *testing.T, dir string) []string {
			so, f := hangingFile(t, dir, "fuse-hang.so")
			files[dir] = f
			return append([]string{mapperBin(t)}, stubArg(so)...)
		},
		check: func(t *testing.T, mode string, r hostileRun, a *attacker) {
			if n := files[a.dir].opens.Load(); n != 1 {
				t.Errorf("the FUSE file was opened %d times, want once (by hostile-mapper)", n)
			}
			if (mode == "pid" || mode == "cmd") && !strings.Contains(r.stderr, "fuse-hang.so (device") {
				t.Errorf("no warning naming fuse-hang.so")
			}
		},
	})
}

// hangingFile mounts a FUSE file system of nobody's at dir/fuse serving
// name, a copy of hostile.Plain's image: its first open is answered,
// every later one waits until the test ends (then fails with EIO). It
// returns the file's path and the file; the file system is unmounted at
// the end of the test.
func hangingFile(t *testing.T, dir, name string) (string, *hangFile) {
	t.Helper()
	plain, err := hostile.Plain(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(dir, "fuse")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	root := &hangDir{file: &hangFile{data: data, release: make(chan struct{})}, name: name}
	srv, err := fs.Mount(mnt, root, &fs.Options{MountOptions: fuse.MountOptions{
		AllowOther: true, DirectMount: true, FsName: "probee-hang", Name: "probeehang",
		Options: []string{"user_id=65534", "group_id=65534"}}}) // after go-fuse's own: they win
	if err != nil {
		t.Skipf("mount a FUSE file system: %v", err)
	}
	closeOnExec(t, "/dev/fuse") // go-fuse's descriptor: not for the processes the test starts
	t.Cleanup(func() {
		close(root.file.release)
		if err := srv.Unmount(); err != nil {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	return filepath.Join(mnt, name), root.file
}

// closeOnExec marks the test process's descriptors of path close-on-exec:
// a FUSE device inherited by a child outlives the test's server, and
// with it every request the server left unanswered.
func closeOnExec(t *testing.T, path string) {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == path {
			fd, _ := strconv.Atoi(e.Name())
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// hangDir is the FUSE file system's root: one file, all nobody's.
type hangDir struct {
	fs.Inode
	file *hangFile
	name string
}

var (
	_ fs.NodeOnAdder    = (*hangDir)(nil)
	_ fs.NodeGetattrer  = (*hangDir)(nil)
	_ fs.NodeSetattrer  = (*hangDir)(nil)
	_ fs.NodeOpener     = (*hangFile)(nil)
	_ fs.NodeReader     = (*hangFile)(nil)
	_ fs.NodeGetattrer  = (*hangFile)(nil)
	_ fs.NodeSetattrer  = (*hangFile)(nil)
	_ fs.NodeReleaser   = (*hangFile)(nil)
	_ fs.NodeStatfser   = (*hangDir)(nil)
	_ fs.NodeAccesser   = (*hangFile)(nil)
	_ fs.NodeOpendirer  = (*hangDir)(nil)
	_ fs.NodeReaddirer  = (*hangDir)(nil)
	_ fs.NodeLookuper   = (*hangDir)(nil)
	_ fs.NodeGetxattrer = (*hangFile)(nil)
)

func (d *hangDir) OnAdd(ctx context.Context) {
	d.AddChild(d.name, d.NewPersistentInode(ctx, d.file, fs.StableAttr{Mode: syscall.S_IFREG}), false)
}

func (d *hangDir) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode, out.Uid, out.Gid = syscall.S_IFDIR|0o755, nobodyID, nobodyID
	return 0
}

// Setattr takes the test's chown (giveToNobody) and changes nothing.
func (d *hangDir) Setattr(_ context.Context, _ fs.FileHandle, _ *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return d.Getattr(context.Background(), nil, out)
}

func (d *hangDir) Statfs(context.Context, *fuse.StatfsOut) syscall.Errno { return 0 }

func (d *hangDir) Opendir(context.Context) syscall.Errno { return 0 }

func (d *hangDir) Readdir(context.Context) (fs.DirStream, syscall.Errno) {
	return fs.NewListDirStream([]fuse.DirEntry{{Name: d.name, Mode: syscall.S_IFREG}}), 0
}

func (d *hangDir) Lookup(_ context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name != d.name {
		return nil, syscall.ENOENT
	}
	d.file.attr(&out.Attr)
	return d.GetChild(name), 0
}

// hangFile answers its first open and no other (until release, or for
// hangFor).
type hangFile struct {
	fs.Inode
	data    []byte
	opens   atomic.Int32
	release chan struct{}
}

func (f *hangFile) attr(a *fuse.Attr) {
	a.Mode, a.Size, a.Uid, a.Gid = syscall.S_IFREG|0o755, uint64(len(f.data)), nobodyID, nobodyID
}

func (f *hangFile) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.attr(&out.Attr)
	return 0
}

func (f *hangFile) Setattr(_ context.Context, _ fs.FileHandle, _ *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f.attr(&out.Attr)
	return 0
}

func (f *hangFile) Access(context.Context, uint32) syscall.Errno { return 0 }

func (f *hangFile) Getxattr(context.Context, string, []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

// hangFor bounds each unanswered open, so that a probee that touched the
// file fails the test (killed past -d + hostileSlack) rather than hang
// it: its stuck threads end once the open is answered.
const hangFor = hostileD + hostileSlack + 10*time.Second

func (f *hangFile) Open(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if f.opens.Add(1) > 1 {
		select {
		case <-f.release:
		case <-time.After(hangFor):
		}
		return nil, 0, syscall.EIO
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *hangFile) Read(_ context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(f.data)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(f.data[off:min(off+int64(len(dest)), int64(len(f.data)))]), 0
}

func (f *hangFile) Release(context.Context, fs.FileHandle) syscall.Errno { return 0 }
