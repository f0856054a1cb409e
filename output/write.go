package output

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes p to each destination (the -o rules of README.md#outputs--o-repeatable):
//   - "*.folded", "*.collapsed": combined collapsed stacks, probe label as root;
//   - "*.svg": combined flamegraph, probe label as the first level;
//   - "*.pb.gz": gzipped pprof (see WritePprof);
//   - a directory (existing, or ending in '/', created if needed): per probe,
//     including probes without hits, "<name>.folded" and "<name>.svg" where
//     name is the label made file-name safe (see FileNames), plus index.txt
//     and index.html listing label, count and files.
//
// With no destinations the combined collapsed stacks go to opts.Stdout.
// Destinations are validated first (see Check). Every file is written to a
// temporary file beside it and renamed into place only when all outputs
// are complete: on error no partial or new file is left behind, and
// directories Write created are removed again.
func Write(p *Profile, dests []string, opts Options) error {
	combined := opts
	combined.WithProbe = true
	if len(dests) == 0 {
		out := opts.Stdout
		if out == nil {
			out = os.Stdout
		}
		return WriteCollapsed(out, p, combined)
	}
	ds, err := parseDests(dests)
	if err != nil {
		return err
	}
	tx := &txn{}
	for _, d := range ds {
		if err = writeDest(tx, p, d, opts, combined); err != nil {
			break
		}
	}
	if err == nil {
		err = tx.commit()
	}
	if err != nil {
		tx.rollback()
	}
	return err
}

func writeDest(tx *txn, p *Profile, d dest, opts, combined Options) error {
	switch d.kind {
	case destFolded:
		return tx.file(d, d.path, func(w io.Writer) error { return WriteCollapsed(w, p, combined) })
	case destSVG:
		return tx.file(d, d.path, func(w io.Writer) error { return WriteSVG(w, p, combined) })
	case destPprof:
		return tx.file(d, d.path, func(w io.Writer) error { return WritePprof(w, p, combined) })
	}
	return writeDir(tx, p, d, opts)
}

// txn collects finished temporary files to rename together.
type txn struct {
	pending [][2]string // temp, final
	dirs    []string    // directories created, outermost first
}

// file renders one output into a temporary file beside path.
func (tx *txn) file(d dest, path string, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("-o %s: %w", d.arg, err)
	}
	tx.pending = append(tx.pending, [2]string{f.Name(), path})
	bw := bufio.NewWriterSize(f, 256<<10)
	err = render(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("-o %s: write %s: %w", d.arg, path, err)
	}
	return nil
}

// mkdir creates dir and its missing parents, remembering them for rollback.
func (tx *txn) mkdir(d dest, dir string) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("-o %s: %w", d.arg, err)
		}
		tx.dirs = append(tx.dirs, missing[i])
	}
	return nil
}

// commit renames every temporary file into place.
func (tx *txn) commit() error {
	for i, pf := range tx.pending {
		if err := os.Rename(pf[0], pf[1]); err != nil {
			tx.pending = tx.pending[i:]
			return fmt.Errorf("write %s: %w", pf[1], err)
		}
	}
	tx.pending = nil
	return nil
}

// rollback removes pending temporary files and the directories created.
func (tx *txn) rollback() {
	for _, pf := range tx.pending {
		os.Remove(pf[0])
	}
	for i := len(tx.dirs) - 1; i >= 0; i-- {
		os.Remove(tx.dirs[i]) // only succeeds when empty
	}
}
