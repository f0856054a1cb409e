package diskcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/probee/probee/unwind"
)

// DefaultMaxBytes bounds a cache directory by default: room for about 75
// tables the size of libLLVM-14's (3.3 MB), or thousands of ordinary
// libraries' (libc's is 93 KB).
const DefaultMaxBytes = 256 << 20

// fileExt ends the name of every cache file: KEY.unwind.
const fileExt = ".unwind"

// Options configure a Dir.
type Options struct {
	// MaxBytes bounds the size of the cache files together; 0 is
	// DefaultMaxBytes. Past it, the least recently used are removed.
	MaxBytes int64
	// Warnf reports corrupt files (then rebuilt) and failed writes (once);
	// Debugf reports stale files (another version's, then rebuilt). nil
	// discards.
	Warnf, Debugf func(format string, args ...any)
}

// Dir is a table cache directory: an unwind.Store. Its methods are safe for
// concurrent use, also by several probee processes sharing the directory.
type Dir struct {
	path          string
	max           int64
	warnf, debugf func(format string, args ...any)
	writes        sync.WaitGroup
	mu            sync.Mutex // serializes this process's writes and evictions
	writeFailed   bool
	// known is the bytes of cache files at the last scan (evict) plus
	// those this process wrote since; scanned is when that scan was.
	known   int64
	scanned time.Time
	scans   int // for tests
}

// rescanEvery is how old the last scan of the directory may be before a
// write scans it again although this process's writes keep it under the
// bound: other probees share the directory.
const rescanEvery = time.Minute

// DefaultDir is $XDG_CACHE_HOME/probee/unwind, else ~/.cache/probee/unwind
// (os.UserCacheDir).
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for the unwind table cache: %w (set XDG_CACHE_HOME or HOME, or give --table-cache-dir)", err)
	}
	return filepath.Join(base, "probee", "unwind"), nil
}

// Open returns the cache in the directory path, creating it (mode 0700)
// when missing.
func Open(path string, o Options) (*Dir, error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("unwind table cache: %w", err)
	}
	d := &Dir{path: path, max: o.MaxBytes, warnf: o.Warnf, debugf: o.Debugf}
	if d.max <= 0 {
		d.max = DefaultMaxBytes
	}
	if d.warnf == nil {
		d.warnf = func(string, ...any) {}
	}
	if d.debugf == nil {
		d.debugf = func(string, ...any) {}
	}
	return d, nil
}

// Path is the cache directory.
func (d *Dir) Path() string { return d.path }

// File is the path of the file that holds the table saved under key.
func (d *Dir) File(key string) string { return filepath.Join(d.path, key+fileExt) }

// Load returns the table saved under key. A missing or stale file is a
// miss; a corrupt one is also reported (Warnf). A file used is marked as
// recently used for eviction.
func (d *Dir) Load(key string) (*unwind.Table, bool) {
	path := d.File(key)
	t, err := readFile(key, path)
	switch {
	case err == nil:
		now := time.Now()
		_ = os.Chtimes(path, now, now) // best effort: used files are evicted last
		return t, true
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, errStale):
		d.debugf("unwind table cache: %s: %v: building the table again", path, err)
	default:
		d.warnf("unwind table cache: %s: %v: building the table again", path, err)
	}
	return nil, false
}

// Save writes t under key in the background (Wait waits for the writes),
// then removes the least recently used files past the size bound. The
// directory is scanned for that when the bytes known to be in it pass the
// bound or the last scan is older than rescanEvery, not at every write:
// scanning at every write was 4 GB of a 5-minute churn run's 20 GB of
// allocations (a new program every second, a cache of thousands of files).
// Failed writes are reported once (Warnf).
func (d *Dir) Save(key string, t *unwind.Table) {
	d.writes.Go(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		n, err := d.write(key, t)
		d.known += n
		if err == nil && (d.known > d.max || time.Since(d.scanned) > rescanEvery) {
			err = d.evict()
		}
		if err != nil && !d.writeFailed {
			d.writeFailed = true
			d.warnf("unwind table cache: %v: tables are built again on the next run", err)
		}
	})
}

// Wait waits for the writes Save started.
func (d *Dir) Wait() { d.writes.Wait() }

// write writes t's file under a temporary name in the directory, then
// renames it over KEY.unwind: a reader sees the old file or the new one,
// never a part. It returns the bytes written.
func (d *Dir) write(key string, t *unwind.Table) (int64, error) {
	head, table, sum, err := encode(key, t)
	if err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(d.path, key+fileExt+tempMark+"*")
	if err != nil {
		return 0, err
	}
	for _, b := range [][]byte{head, table, sum} {
		if _, err = f.Write(b); err != nil {
			break
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), d.File(key))
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return int64(len(head) + len(table) + len(sum)), nil
}
