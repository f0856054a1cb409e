package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// destKind is what an -o destination receives.
type destKind int

const (
	destFolded destKind = iota // combined collapsed stacks
	destSVG                    // combined flamegraph
	destPprof                  // gzipped pprof
	destDir                    // per-probe files and an index
)

// dest is one planned -o destination: its kind and the directory it is
// written through, both fixed when the run starts.
type dest struct {
	arg  string // as given, for messages
	path string // cleaned
	kind destKind
	// dir is the directory the file goes into; for destDir the directory
	// itself, or its nearest existing ancestor when mkdirs is not empty.
	dir    *dirFD
	mkdirs []string // destDir: directories to create under dir, outermost first
}

// Dests are the -o destinations of a run, classified and opened once,
// before tracing starts (Plan), and written at its end (Write).
type Dests struct {
	list []dest
}

const extHelp = "use .folded, .collapsed, .svg, .pb.gz or a directory ending in /"

// Plan validates the -o arguments before anything is traced, so the CLI
// can fail early, and fixes what each one is: a directory when it ends in
// '/' or names an existing directory, otherwise a file by its extension
// (case-insensitive). None may repeat, none may be a symbolic link (a
// link another user planted would have probee write where they chose),
// and each must be writable: its directory, or for a directory to be
// created its nearest existing ancestor, takes a new file. An existing
// destination directory must be owned by root or the effective uid and,
// when world-writable, be sticky (checkExistingDir). That directory
// is held open to the end of the run. Nothing is created (a probe file is
// created and removed). The error names the -o argument and the fix.
func Plan(args []string) (*Dests, error) {
	ds := &Dests{}
	seen := map[string]string{}
	for _, a := range args {
		d, err := parseDest(a)
		if err == nil {
			if prev, ok := seen[d.path]; ok {
				err = fmt.Errorf("-o %s: same destination as -o %s: give each output once", a, prev)
			}
		}
		if err == nil {
			err = d.open()
		}
		if err != nil {
			ds.Close()
			return nil, err
		}
		seen[d.path] = a
		ds.list = append(ds.list, d)
	}
	return ds, nil
}

// Close lets go of the directories Plan opened.
func (ds *Dests) Close() {
	if ds == nil {
		return
	}
	for _, d := range ds.list {
		d.dir.close()
	}
	ds.list = nil
}

// parseDest classifies one -o argument.
func parseDest(arg string) (dest, error) {
	d := dest{arg: arg, path: filepath.Clean(arg)}
	if arg == "" {
		return d, fmt.Errorf("-o: empty path: %s", extHelp)
	}
	fi, err := os.Lstat(d.path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return d, linkError(d)
	}
	if err := plantedLink(d); err != nil {
		return d, err
	}
	if strings.HasSuffix(arg, "/") || err == nil && fi.IsDir() {
		d.kind = destDir
		return d, nil
	}
	if d.kind, err = kindOf(arg); err != nil {
		return d, err
	}
	if fi != nil && !fi.Mode().IsRegular() {
		return d, fmt.Errorf("-o %s: exists and is not a regular file (%s): choose another path", arg, fi.Mode().Type())
	}
	return d, nil
}

// kindOf is the kind of file output arg names by its extension.
func kindOf(arg string) (destKind, error) {
	lower := strings.ToLower(arg)
	switch {
	case strings.HasSuffix(lower, ".folded"), strings.HasSuffix(lower, ".collapsed"):
		return destFolded, nil
	case strings.HasSuffix(lower, ".svg"):
		return destSVG, nil
	case strings.HasSuffix(lower, ".pb.gz"):
		return destPprof, nil
	}
	if ext := filepath.Ext(arg); ext != "" {
		return 0, fmt.Errorf("-o %s: unknown output extension %q: %s", arg, ext, extHelp)
	}
	return 0, fmt.Errorf("-o %s: no output extension: %s", arg, extHelp)
}

// linkError refuses a destination that is a symbolic link, saying where
// it points.
func linkError(d dest) error {
	target, _ := os.Readlink(d.path)
	what := "a symbolic link to " + target
	if fi, err := os.Stat(d.path); err == nil && fi.IsDir() {
		what = "a symbolic link to the directory " + target
	}
	return fmt.Errorf("-o %s: is %s: probee does not write through links (in a shared directory "+
		"such as /tmp another user may have planted it): give the real path, or remove the link", d.arg, what)
}

// plantedLink refuses a path through a symbolic link another user made in
// a sticky world-writable directory such as /tmp, unless that user owns
// the directory: the rule of the kernel's fs.protected_symlinks, which
// is off on some machines.
func plantedLink(d dest) error {
	abs, err := filepath.Abs(d.path)
	if err != nil {
		return nil
	}
	euid := uint32(os.Geteuid())
	for p := filepath.Dir(abs); p != filepath.Dir(p); p = filepath.Dir(p) {
		link, err := os.Lstat(p)
		if err != nil || link.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		dir, err := os.Stat(filepath.Dir(p))
		if err != nil || dir.Mode()&(fs.ModeSticky|0o002) != fs.ModeSticky|0o002 {
			continue
		}
		lu, du := link.Sys().(*syscall.Stat_t).Uid, dir.Sys().(*syscall.Stat_t).Uid
		if lu != euid && lu != du {
			return fmt.Errorf("-o %s: %s is a symbolic link that uid %d made in the shared directory %s: "+
				"probee does not follow links other users plant there; give the real path", d.arg, p, lu, filepath.Dir(p))
		}
	}
	return nil
}

// open opens the directory d is written through and checks that it takes
// a new file.
func (d *dest) open() error {
	dir, err := d.openDir()
	if err != nil {
		return err
	}
	d.dir = dir
	err = d.checkExistingDir()
	if err == nil {
		err = d.checkWritable()
	}
	if err != nil {
		dir.close()
		return err
	}
	return nil
}

// checkExistingDir refuses an existing destination directory that another
// user could change under probee: one owned by neither root nor probee's
// effective uid (whoever planted /tmp/out could swap probee's files
// there), or one anyone may write in without the sticky bit.
func (d *dest) checkExistingDir() error {
	if d.kind != destDir || len(d.mkdirs) > 0 {
		return nil // a file goes into the directory named with it; a new directory is probee's
	}
	uid, mode, err := d.dir.stat()
	if err != nil {
		return fmt.Errorf("-o %s: %w", d.arg, err)
	}
	if uid != 0 && int(uid) != os.Geteuid() {
		return fmt.Errorf("-o %s: the directory %s is owned by %s, not by root or by probee's user: "+
			"its owner could swap probee's files there; choose another path or remove it", d.arg, d.path, userName(uid))
	}
	if mode&(unix.S_IWOTH|unix.S_ISVTX) == unix.S_IWOTH {
		return fmt.Errorf("-o %s: the directory %s is world-writable without the sticky bit (mode %04o): "+
			"any user could swap probee's files there; choose another path or remove it", d.arg, d.path, mode)
	}
	return nil
}

// userName is "uid N (NAME)", or "uid N" when N has no name.
func userName(uid uint32) string {
	s := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(s); err == nil {
		return "uid " + s + " (" + u.Username + ")"
	}
	return "uid " + s
}

// openDir opens the directory a file goes into, or a destination
// directory (never through a link), or its nearest existing ancestor,
// noting the directories to create (d.mkdirs).
func (d *dest) openDir() (*dirFD, error) {
	if d.kind != destDir {
		dir := filepath.Dir(d.path)
		f, err := openDir(dir)
		switch {
		case errors.Is(err, syscall.ENOENT):
			return nil, fmt.Errorf("-o %s: directory %s does not exist: create it first or choose another path", d.arg, dir)
		case errors.Is(err, syscall.ENOTDIR):
			return nil, fmt.Errorf("-o %s: %s is not a directory: choose another path", d.arg, nonDir(dir))
		case err != nil:
			return nil, fmt.Errorf("-o %s: %w", d.arg, err)
		}
		return f, nil
	}
	return d.openDestDir()
}

// openDestDir opens a destination directory, or its nearest existing
// ancestor when it is to be created.
func (d *dest) openDestDir() (*dirFD, error) {
	var missing []string
	for p := d.path; ; p = filepath.Dir(p) {
		parent, err := openDir(filepath.Dir(p))
		if errors.Is(err, syscall.ENOENT) && p != filepath.Dir(p) {
			missing = append(missing, filepath.Base(p)) // p's parent is missing too
			continue
		}
		if err != nil {
			return nil, d.dirError(filepath.Dir(p), err)
		}
		f, err := parent.openDirAt(filepath.Base(p))
		switch {
		case err == nil:
			parent.close()
			d.mkdirs = reversed(missing)
			return f, nil
		case errors.Is(err, syscall.ENOENT):
			d.mkdirs = reversed(append(missing, filepath.Base(p)))
			return parent, nil
		}
		parent.close()
		return nil, d.dirError(p, err)
	}
}

// dirError words a failure to open dir, on the way to d's directory.
func (d *dest) dirError(dir string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("-o %s: %s is not a directory: choose another path", d.arg, nonDir(dir))
	}
	if dir == d.path {
		return fmt.Errorf("-o %s: open %s: %w", d.arg, dir, unwrapPath(err))
	}
	return fmt.Errorf("-o %s: cannot create directory %s: %w: choose another path", d.arg, d.path, unwrapPath(err))
}

// nonDir is the part of path that is there and not a directory, for an
// error that says path is not one (ENOTDIR); path when none is found.
func nonDir(path string) string {
	for p := path; p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				return p
			}
			break
		}
	}
	return path
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// checkWritable makes sure d's directory takes a new file, by creating
// and removing a probe file there.
func (d *dest) checkWritable() error {
	f, name, err := d.dir.createTemp("probee-check")
	if err != nil {
		return fmt.Errorf("-o %s: cannot write in %s: %w: choose a writable directory", d.arg, d.dir.path, err)
	}
	f.Close()
	d.dir.remove(name)
	return nil
}

// unwrapPath drops the *PathError wrapper, whose message repeats a path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
