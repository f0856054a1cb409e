package diskcache

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// tempMark is in the name of a file being written (KEY.unwind.tmp-RANDOM).
const tempMark = ".tmp-"

// staleTemp is the age past which a temporary file is taken for the
// leftover of a probee that was killed while writing it.
const staleTemp = time.Hour

type cacheFile struct {
	name  string
	size  int64
	mtime time.Time
}

// evict removes the least recently used cache files (oldest mtime first;
// Load refreshes it) until the rest fit the size bound, and temporary files
// left behind. Other files in the directory are left alone.
func (d *Dir) evict() error {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	var files []cacheFile
	var total int64
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue // removed meanwhile, or not ours
		}
		f := cacheFile{e.Name(), info.Size(), info.ModTime()}
		switch {
		case strings.Contains(f.name, tempMark):
			if time.Since(f.mtime) > staleTemp {
				d.remove(f.name)
			}
		case strings.HasSuffix(f.name, fileExt):
			files = append(files, f)
			total += f.size
		}
	}
	slices.SortFunc(files, func(a, b cacheFile) int {
		return cmp.Or(a.mtime.Compare(b.mtime), cmp.Compare(a.name, b.name))
	})
	for _, f := range files {
		if total <= d.max {
			break
		}
		d.remove(f.name)
		total -= f.size
	}
	d.known, d.scanned = total, time.Now()
	d.scans++
	return nil
}

// remove removes a file of the directory; another probee may have removed
// it already.
func (d *Dir) remove(name string) {
	if err := os.Remove(filepath.Join(d.path, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.debugf("unwind table cache: %v", err)
	}
}
