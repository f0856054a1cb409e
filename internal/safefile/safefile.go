// Package safefile owns how probee opens the files that traced processes
// control: their executables and libraries, debug files, perf maps, files
// under /proc/PID/root. probee runs as root and such a file is whatever an
// unprivileged process put at that path, possibly swapped while probee
// looks. So every open here:
//
//   - never blocks and has no side effect: the path is opened with O_PATH
//     first (no open of a FIFO, device or socket happens), the object is
//     checked with fstat, and only a regular file is opened for reading,
//     through /proc/self/fd of that very object, with O_NONBLOCK;
//   - follows no symbolic link where the caller says a process names the
//     path (OpenNoFollow, OpenBeneath), and stays inside a process's root
//     for paths under /proc/PID/root (openat2 RESOLVE_IN_ROOT: an absolute
//     link inside a chroot resolves inside it, never on the host);
//   - reads only through the descriptor it opened, never past the size
//     fstat gave (File.ReadAt): a file that grows, or a header that claims
//     more than the file holds, cannot make a reader allocate beyond it;
//     Budget checks a size before anything is allocated for it.
//
// The standard library has the pieces (os.Root stays beneath a directory
// but refuses absolute links inside a chroot, and opens FIFOs for reading
// before it could check them); the combination is written here once.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is returned for a path that names a FIFO, device, socket,
// directory or (for the no-follow opens) a symbolic link.
var ErrNotRegular = errors.New("not a regular file")

// Info is what fstat said of an opened file when it was opened.
type Info struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds since the epoch
}

// File is a regular file opened by this package. Its reads stop at
// Info.Size.
type File struct {
	Info
	Name string // the path it was opened as
	fh   *os.File
}

// ReadAt reads from the opened file, never past Info.Size.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s at negative offset %d", f.Name, off)
	}
	if off >= f.Size {
		return 0, io.EOF
	}
	short := false
	if rest := f.Size - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := f.fh.ReadAt(p, off)
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// CurrentSize takes the file's size anew (a file that is appended to, as a
// perf map is) and lets reads reach it. An fstat error leaves the size.
func (f *File) CurrentSize() int64 {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.fh.Fd()), &st); err == nil {
		f.Size = st.Size
	}
	return f.Size
}

// Close closes the descriptor.
func (f *File) Close() error { return f.fh.Close() }

// OS is the descriptor as an *os.File, for mmap and fstat; reads must go
// through ReadAt.
func (f *File) OS() *os.File { return f.fh }

var (
	procRoot = regexp.MustCompile(`^(.*/proc/[0-9]+/root)(/.*)?$`)
	// The kernel's links to a file a process has (its executable, a
	// mapping, a descriptor): they name that file itself, whatever its
	// path shows now.
	procFileLink = regexp.MustCompile(`/proc/(self|[0-9]+)/(exe|map_files/[0-9a-f]+-[0-9a-f]+|fd/[0-9]+)$`)
)

// Open opens the regular file at path. Symbolic links are followed, except
// that a path under /proc/PID/root is resolved inside that root. Use it for
// paths probee chose (a spec's file, ld.so.cache, PT_INTERP of a command),
// and for the kernel's links to a process's files (/proc/PID/exe,
// /proc/PID/map_files/*, /proc/PID/fd/*), which are followed by any open
// here.
func Open(path string) (*File, error) {
	return open(path, 0)
}

// OpenNoFollow is Open for a path a traced process names (/proc/PID/maps,
// a perf map): its last component must not be a symbolic link (the
// kernel's links to a process's files are still followed).
func OpenNoFollow(path string) (*File, error) {
	if procFileLink.MatchString(path) {
		return open(path, 0)
	}
	return open(path, unix.O_NOFOLLOW)
}

func open(path string, flags int) (*File, error) {
	if m := procRoot.FindStringSubmatch(path); m != nil {
		return OpenIn(m[1], m[2], flags&unix.O_NOFOLLOW != 0)
	}
	var resolve uint64 = unix.RESOLVE_NO_MAGICLINKS
	if procFileLink.MatchString(path) {
		resolve = 0 // the kernel's link to the file itself
	}
	return openAt(unix.AT_FDCWD, path, path, flags, resolve)
}

// OpenIn opens name (absolute or relative) as the process whose root is
// the directory root sees it: symbolic links, absolute ones included,
// resolve inside root, and ".." stops at it. noFollow refuses a link as
// the last component.
func OpenIn(root, name string, noFollow bool) (*File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	if name == "" {
		name = "/"
	}
	flags := 0
	if noFollow {
		flags = unix.O_NOFOLLOW
	}
	return openAt(dir, name, root+name, flags, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
}

// OpenBeneath opens name below the directory dir without following any
// symbolic link below dir: for a file a process names relative to one of
// its own files (a .gnu_debuglink beside the binary).
func OpenBeneath(dir, name string) (*File, error) {
	d, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Open(name)
}

// Dir is a directory opened by OpenDir: files are opened below it, as it
// was when opened (it may be held after the path stops naming it: a
// process's /tmp after the process exited).
type Dir struct {
	fd   int
	Name string
}

// OpenDir opens the directory at path, resolving a path under
// /proc/PID/root inside that root (as Open does).
func OpenDir(path string) (*Dir, error) {
	fd, err := openDirFD(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, Name: path}, nil
}

func openDirFD(path string) (int, error) {
	how := &unix.OpenHow{Flags: uint64(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_MAGICLINKS}
	m := procRoot.FindStringSubmatch(path)
	if m == nil {
		return unix.Openat2(unix.AT_FDCWD, path, how)
	}
	root, err := unix.Open(m[1], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || m[2] == "" {
		return root, err
	}
	defer unix.Close(root)
	how.Resolve |= unix.RESOLVE_IN_ROOT
	return unix.Openat2(root, m[2], how)
}

// Open opens name below d without following any symbolic link.
func (d *Dir) Open(name string) (*File, error) {
	return openAt(d.fd, name, d.Name+"/"+name, unix.O_NOFOLLOW, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS)
}

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// openAt opens name (relative to dirfd) with O_PATH, checks it is a
// regular file and opens that object for reading.
func openAt(dirfd int, name, shown string, flags int, resolve uint64) (*File, error) {
	how := &unix.OpenHow{Flags: uint64(unix.O_PATH | unix.O_CLOEXEC | flags), Resolve: resolve}
	fd, err := unix.Openat2(dirfd, name, how) // 5.6+: every kernel probee runs on
	if err != nil {
		if err == unix.ELOOP && flags&unix.O_NOFOLLOW != 0 {
			err = fmt.Errorf("%w (a symbolic link, not followed)", ErrNotRegular)
		}
		return nil, &os.PathError{Op: "open", Path: shown, Err: err}
	}
	defer unix.Close(fd)
	return reopen(fd, shown)
}

// reopen checks the O_PATH descriptor fd and opens its object for reading.
func reopen(fd int, shown string) (*File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: shown, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &os.PathError{Op: "open", Path: shown, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode))}
	}
	rfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: shown, Err: err}
	}
	info := Info{Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
	return &File{Info: info, Name: shown, fh: os.NewFile(uintptr(rfd), shown)}, nil
}

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return fmt.Sprintf("file type %#o", mode&unix.S_IFMT)
}
