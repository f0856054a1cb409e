package output

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"golang.org/x/sys/unix"
)

// dirFD is a directory opened once, when the destinations are planned:
// every output file is created, renamed and removed relative to it
// (openat, renameat, unlinkat), never through its path looked up again, so
// a symbolic link planted in the path during the run leads nowhere.
type dirFD struct {
	fd   int
	path string // for messages
}

// openDir opens the directory path, following symbolic links in it (a path
// the user gave).
func openDir(path string) (*dirFD, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &dirFD{fd: fd, path: path}, nil
}

// openDirAt opens the directory name in d without following a symbolic
// link there (ENOTDIR for a link, as for a file).
func (d *dirFD) openDirAt(name string) (*dirFD, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return &dirFD{fd: fd, path: d.join(name)}, nil
}

// createTemp creates a new file beside name, open for writing, with
// O_EXCL|O_NOFOLLOW: never an existing file or the target of a link. It
// returns the file and its name in d.
func (d *dirFD) createTemp(name string) (*os.File, string, error) {
	for range 100 {
		tmp := fmt.Sprintf(".%s.tmp-%08x", name, rand.Uint32())
		fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return os.NewFile(uintptr(fd), d.join(tmp)), tmp, nil
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", d.join(name))
}

// rename moves the file old in d to name in d, replacing what is there
// (a link there is replaced, not followed).
func (d *dirFD) rename(old, name string) error {
	return unix.Renameat(d.fd, old, d.fd, name)
}

// remove removes the file name from d.
func (d *dirFD) remove(name string) error { return unix.Unlinkat(d.fd, name, 0) }

// rmdir removes the directory name from d when it is empty.
func (d *dirFD) rmdir(name string) error { return unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR) }

// mkdir creates the directory name in d, 0755 (never world-writable).
func (d *dirFD) mkdir(name string) error { return unix.Mkdirat(d.fd, name, 0o755) }

// stat is the directory's owner and mode bits (permissions, sticky).
func (d *dirFD) stat() (uid, mode uint32, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return 0, 0, err
	}
	return st.Uid, st.Mode &^ unix.S_IFMT, nil
}

func (d *dirFD) join(name string) string {
	if d.path == "/" {
		return "/" + name
	}
	return d.path + "/" + name
}

func (d *dirFD) close() {
	if d != nil {
		unix.Close(d.fd)
	}
}
