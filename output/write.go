package output

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
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
// Each destination is written on its own, as Plan fixed it, through the
// directory Plan opened: its files to new temporary files beside them
// (O_EXCL|O_NOFOLLOW), renamed into place once all of them are complete.
// A destination that fails (a full disk, an I/O error) leaves no partial
// or new file behind (an older file there stays as it was) and removes
// the directories it created; the others are still written. The error
// joins one error per failed destination.
func Write(p *Profile, ds *Dests, opts Options) error {
	combined := opts
	combined.WithProbe = true
	if ds == nil || len(ds.list) == 0 {
		out := opts.Stdout
		if out == nil {
			out = os.Stdout
		}
		return WriteCollapsed(out, p, combined)
	}
	var errs []error
	for _, d := range ds.list {
		if err := writeDest(p, d, opts, combined); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeDest writes one destination, all of its files or none.
func writeDest(p *Profile, d dest, opts, combined Options) error {
	tx := &txn{d: d}
	defer tx.closeDirs()
	err := renderDest(tx, p, d, opts, combined)
	if err == nil {
		err = tx.commit()
	}
	if err != nil {
		tx.rollback()
	}
	return err
}

func renderDest(tx *txn, p *Profile, d dest, opts, combined Options) error {
	name := filepath.Base(d.path)
	switch d.kind {
	case destFolded:
		return tx.file(d.dir, name, func(w io.Writer) error { return WriteCollapsed(w, p, combined) })
	case destSVG:
		return tx.file(d.dir, name, func(w io.Writer) error { return WriteSVG(w, p, combined) })
	case destPprof:
		return tx.file(d.dir, name, func(w io.Writer) error { return WritePprof(w, p, combined) })
	}
	return writeDir(tx, p, opts)
}

// txn collects one destination's finished temporary files to rename
// together.
type txn struct {
	d       dest
	pending []pendingFile
	made    []madeDir // directories created, outermost first
	opened  []*dirFD  // directories opened for this destination
}

type pendingFile struct {
	dir       *dirFD
	tmp, name string
}

type madeDir struct {
	parent *dirFD
	name   string
}

// file renders one output into a temporary file beside name in dir.
func (tx *txn) file(dir *dirFD, name string, render func(io.Writer) error) error {
	f, tmp, err := dir.createTemp(name)
	if err != nil {
		return tx.errorf(dir.join(name), err)
	}
	tx.pending = append(tx.pending, pendingFile{dir, tmp, name})
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
		return tx.errorf(dir.join(name), err)
	}
	return nil
}

// errorf names the destination, the file and the cause (without the
// temporary file's name).
func (tx *txn) errorf(path string, err error) error {
	msg := fmt.Sprintf("-o %s: write %s: %v", tx.d.arg, path, unwrapPath(err))
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		msg += ": free some space or choose another file system"
	}
	return errors.New(msg)
}

// mkdirs creates the destination directory's missing parts and returns
// the directory, opened (never through a link).
func (tx *txn) mkdirs() (*dirFD, error) {
	dir := tx.d.dir
	for _, name := range tx.d.mkdirs {
		err := dir.mkdir(name)
		if err == nil {
			tx.made = append(tx.made, madeDir{dir, name})
		} else if !errors.Is(err, syscall.EEXIST) {
			return nil, tx.errorf(dir.join(name), err)
		}
		next, err := dir.openDirAt(name)
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("-o %s: %s changed while probee ran (it is now a link or a file): not writing there; choose another path", tx.d.arg, dir.join(name))
		}
		if err != nil {
			return nil, tx.errorf(dir.join(name), err)
		}
		tx.opened = append(tx.opened, next)
		if err := tx.checkOwner(next); err != nil {
			return nil, err
		}
		dir = next
	}
	return dir, nil
}

// checkOwner refuses a directory that another user made while probee
// ran, where probee was to create it.
func (tx *txn) checkOwner(dir *dirFD) error {
	uid, _, err := dir.stat()
	if err != nil {
		return tx.errorf(dir.path, err)
	}
	if int(uid) != os.Geteuid() {
		return fmt.Errorf("-o %s: %s was made by uid %d while probee ran: not writing there; choose another path", tx.d.arg, dir.path, uid)
	}
	return nil
}

// commit renames every temporary file into place.
func (tx *txn) commit() error {
	for i, pf := range tx.pending {
		if err := pf.dir.rename(pf.tmp, pf.name); err != nil {
			tx.pending = tx.pending[i:]
			return tx.errorf(pf.dir.join(pf.name), err)
		}
	}
	tx.pending = nil
	return nil
}

// rollback removes pending temporary files and the directories created.
func (tx *txn) rollback() {
	for _, pf := range tx.pending {
		pf.dir.remove(pf.tmp)
	}
	for i := len(tx.made) - 1; i >= 0; i-- {
		tx.made[i].parent.rmdir(tx.made[i].name) // only succeeds when empty
	}
}

func (tx *txn) closeDirs() {
	for _, d := range tx.opened {
		d.close()
	}
}
