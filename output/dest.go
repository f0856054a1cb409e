package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// destKind is what an -o destination receives.
type destKind int

const (
	destFolded destKind = iota // combined collapsed stacks
	destSVG                    // combined flamegraph
	destPprof                  // gzipped pprof
	destDir                    // per-probe files and an index
)

// dest is one parsed -o destination.
type dest struct {
	arg  string // as given, for messages
	path string // cleaned
	kind destKind
}

const extHelp = "use .folded, .collapsed, .svg, .pb.gz or a directory ending in /"

// parseDest classifies one -o argument: a directory when it ends in '/' or
// names an existing directory, otherwise by extension (case-insensitive).
func parseDest(arg string) (dest, error) {
	d := dest{arg: arg, path: filepath.Clean(arg)}
	if arg == "" {
		return d, fmt.Errorf("-o: empty path: %s", extHelp)
	}
	if strings.HasSuffix(arg, "/") {
		d.kind = destDir
		return d, nil
	}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		d.kind = destDir
		return d, nil
	}
	lower := strings.ToLower(arg)
	switch {
	case strings.HasSuffix(lower, ".folded"), strings.HasSuffix(lower, ".collapsed"):
		d.kind = destFolded
	case strings.HasSuffix(lower, ".svg"):
		d.kind = destSVG
	case strings.HasSuffix(lower, ".pb.gz"):
		d.kind = destPprof
	default:
		ext := filepath.Ext(arg)
		if ext == "" {
			return d, fmt.Errorf("-o %s: no output extension: %s", arg, extHelp)
		}
		return d, fmt.Errorf("-o %s: unknown output extension %q: %s", arg, ext, extHelp)
	}
	return d, nil
}

// Check validates destinations before anything is traced, so the CLI can
// fail early: each must have a known extension or be a directory, none may
// repeat, and each must be writable (its directory, or for a directory to
// be created its nearest existing parent, accepts a new file). Nothing is
// left behind. The error names the -o argument and the fix.
func Check(dests []string) error {
	_, err := parseDests(dests)
	return err
}

func parseDests(args []string) ([]dest, error) {
	seen := map[string]string{}
	ds := make([]dest, 0, len(args))
	for _, a := range args {
		d, err := parseDest(a)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[d.path]; ok {
			return nil, fmt.Errorf("-o %s: same destination as -o %s: give each output once", a, prev)
		}
		seen[d.path] = a
		if err := checkWritable(d); err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// checkWritable makes sure d's directory exists (or can be created) and
// takes a new file, by creating and removing a probe file there.
func checkWritable(d dest) error {
	dir := filepath.Dir(d.path)
	if d.kind == destDir {
		dir = d.path
	}
	fi, err := os.Stat(dir)
	switch {
	case d.kind == destDir && missing(err):
		parent, perr := existingParent(dir)
		if perr != nil {
			return fmt.Errorf("-o %s: %w", d.arg, perr)
		}
		dir = parent
	case missing(err):
		return fmt.Errorf("-o %s: directory %s does not exist: create it first or choose another path", d.arg, dir)
	case err != nil:
		return fmt.Errorf("-o %s: %w", d.arg, err)
	case !fi.IsDir():
		return fmt.Errorf("-o %s: %s is not a directory: choose another path", d.arg, dir)
	}
	f, err := os.CreateTemp(dir, ".probee-check-*")
	if err != nil {
		return fmt.Errorf("-o %s: cannot write in %s: %w: choose a writable directory", d.arg, dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// existingParent returns the nearest existing ancestor of dir, which must
// be a directory for dir to be created.
func existingParent(dir string) (string, error) {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return "", fmt.Errorf("cannot create directory %s: %s is not a directory: choose another path", dir, p)
			}
			return p, nil
		}
		if !missing(err) || p == filepath.Dir(p) {
			return "", fmt.Errorf("cannot create directory %s: %w", dir, err)
		}
	}
}

// missing reports whether err says a path does not exist, including
// because a parent is a file (ENOTDIR).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// unwrapPath drops the *PathError wrapper, whose message repeats a temp name.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
