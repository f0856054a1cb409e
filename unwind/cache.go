package unwind

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// Cache builds each ELF file's table once and shares it between processes.
// Tables are keyed by file identity (internal/fileid: the file's version
// with its build-id; the key resolver's Index uses too), so paths to one
// file share a table. With a Store, a table is looked up there before it
// is built, and a table built is saved there: a later run finds it. The
// tables held together stay within a budget (SetBudget: the run's
// --unwind-budget, the most the kernel takes anyway), whatever the machine
// maps. It is safe for concurrent use.
type Cache struct {
	tables fileid.Cache[*held]
	store  Store // nil: tables live as long as the Cache
	mu     sync.Mutex
	stats  CacheStats
	budget uint64 // bytes of tables held at most (0: no limit)
	held   uint64 // bytes of tables held

	vdsoOnce sync.Once // the vDSO's table (vdso.go)
	vdso     *Table
	vdsoErr  error
}

// held is a table the Cache holds, with when it was last asked for
// (unix nanoseconds: Evict).
type held struct {
	t    *Table
	used atomic.Int64
}

// Store keeps tables from one run to the next (package unwind/diskcache
// keeps them on disk). Both methods are safe for concurrent use.
type Store interface {
	// Load returns the table saved under key, or false when there is no
	// usable one (none, of another version, corrupt: the store reports
	// what it refuses itself).
	Load(key string) (*Table, bool)
	// Save keeps t under key. It may return before t is written; the
	// store reports the errors.
	Save(key string, t *Table)
}

// CacheStats counts where a Cache's tables came from.
type CacheStats struct {
	Built, Loaded       int           // built from the file's CFI; loaded from the Store
	BuildTime, LoadTime time.Duration // spent building, loading (summed over concurrent builds)
}

// NewCache returns an empty cache without a Store.
func NewCache() *Cache { return &Cache{} }

// NewCacheWithStore returns an empty cache that loads and saves tables
// through store.
func NewCacheWithStore(store Store) *Cache { return &Cache{store: store} }

// SetBudget bounds the bytes of the tables the cache holds: past it, a
// new table is neither built nor loaded (an error wrapping
// internal/safeelf.ErrBudget): its file's stacks are walked by frame
// pointers.
func (c *Cache) SetBudget(bytes uint64) {
	c.mu.Lock()
	c.budget = bytes
	c.mu.Unlock()
}

// reserve reports whether the cache has room for another table, with an
// error when it does not.
func (c *Cache) reserve(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.budget == 0 || c.held < c.budget {
		return nil
	}
	return fmt.Errorf("unwind table %s: %s of tables held, %w of %s (--unwind-budget): not built", key, safeelf.Size(c.held), safeelf.ErrBudget, safeelf.Size(c.budget))
}

// hold counts t in the bytes held.
func (c *Cache) hold(t *Table) {
	c.mu.Lock()
	c.held += uint64(t.Size())
	c.mu.Unlock()
}

// Evict lets go of the tables of the files for which inUse reports false
// and that no Get asked for in the last idle, and returns how many:
// inUse is asked only about the tables idle that long, and each false
// answer lets one go (so the caller learns which). A
// later Get of such a file builds (or loads) its table anew. A long
// system-wide run on a machine that keeps running new code would
// otherwise hold the table of every file it ever unwound, up to the
// budget (the kernel keeps its copy: bpf knows a table by Table.Key).
func (c *Cache) Evict(inUse func(fileid.ID) bool, idle time.Duration) int {
	cut := time.Now().Add(-idle).UnixNano()
	var freed uint64
	n := c.tables.DeleteFunc(func(id fileid.ID, h *held) bool {
		if h.used.Load() > cut || inUse(id) {
			return false
		}
		freed += uint64(h.t.Size())
		return true
	})
	c.mu.Lock()
	c.held -= min(freed, c.held)
	c.mu.Unlock()
	return n
}

// Held is the bytes of the tables held (what SetBudget bounds).
func (c *Cache) Held() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// Len is the number of distinct tables held.
func (c *Cache) Len() int { return c.tables.Len() }

// Stats says how many tables were built and loaded so far, and how long
// that took.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Get returns the table of the ELF file at path, building it on first use
// (or loading it from the Store).
func (c *Cache) Get(path string) (*Table, error) {
	return fileid.Bounded(path, func() (*Table, error) { return c.get(path, fileid.Open) })
}

// get is Get without the time budget, opening path with open.
func (c *Cache) get(path string, open func(string) (fileid.ID, *safefile.File, error)) (*Table, error) {
	id, src, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("unwind table: %w", err)
	}
	defer src.Close()
	h, err := c.tables.Get(id, func() (*held, error) {
		t, err := c.obtain(id.Key(), src)
		if err != nil {
			return nil, err
		}
		return &held{t: t}, nil
	})
	if err != nil {
		return nil, err
	}
	h.used.Store(time.Now().UnixNano())
	return h.t, nil
}

// obtain loads the table saved under key, or builds it from src and
// saves it. A failed build is not saved: the next run tries again.
func (c *Cache) obtain(key string, src *safefile.File) (*Table, error) {
	if err := c.reserve(src.Name); err != nil {
		return nil, err
	}
	t, err := c.loadOrBuild(key, src)
	if err == nil {
		c.hold(t)
	}
	return t, err
}

// loadOrBuild is obtain without the budget.
func (c *Cache) loadOrBuild(key string, src *safefile.File) (*Table, error) {
	start := time.Now()
	if c.store != nil {
		if t, ok := c.store.Load(key); ok {
			t.Key = key
			c.count(&c.stats.Loaded, &c.stats.LoadTime, start)
			return t, nil
		}
	}
	t, err := buildFrom(src)
	if err != nil {
		return nil, err
	}
	t.Key = key
	c.count(&c.stats.Built, &c.stats.BuildTime, start)
	if c.store != nil {
		c.store.Save(key, t)
	}
	return t, nil
}

func (c *Cache) count(n *int, d *time.Duration, start time.Time) {
	c.mu.Lock()
	*n++
	*d += time.Since(start)
	c.mu.Unlock()
}

// Module is one executable file mapping of a process with its table.
type Module struct {
	Start, End uint64
	Bias       uint64 // runtime address = ELF virtual address + Bias
	Path       string
	Table      *Table // no entries: the file has no CFI (frame pointers only)
	// The mapping's file offset and the file's identity as /proc/PID/maps
	// shows it (device "fd:01", inode): the kernel finds the table of any
	// later mapping of the file by them (bpf file tables).
	Offset uint64
	Dev    string
	Inode  uint64
	// File is the path the table was read from: it opens the mapped file
	// (while the process lives, for a path under /proc/PID). The kernel
	// side maps it to learn the file's identity as its unwinder sees it.
	File string
	// Go is where the walk of a Go binary goes on from runtime.morestack
	// to the goroutine whose stack grows (nil: not a Go binary, or not
	// found).
	Go *GoStack
}

// Modules resolves the executable file mappings in maps. file gives the
// path that opens the file a mapping maps (procmaps.File, for a process's
// mappings: its path may name another file, in a container); nil opens the
// mapping's path as it is. Mappings that cannot be resolved are left out
// and reported in errs.
func (c *Cache) Modules(maps []procmaps.Mapping, file func(procmaps.Mapping) (string, error)) (mods []Module, errs []error) {
	for _, m := range maps {
		if m.Path == VDSOPath {
			if mod, err := c.vdsoModule(m); err == nil {
				mods = append(mods, mod)
			} else if !errors.Is(err, errNotVDSO) {
				errs = append(errs, err)
			}
			continue
		}
		if !m.Exec() || !filepath.IsAbs(m.Path) {
			continue // anonymous, [uprobes], JIT code
		}
		path := m.Path
		if file != nil {
			var err error
			if path, err = file(m); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		mod, err := c.module(m, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		mods = append(mods, mod)
	}
	return mods, errs
}

// module is the module of mapping m, whose file path opens: a mapped
// file's path names no link, so none is followed (fileid.OpenNoFollow).
func (c *Cache) module(m procmaps.Mapping, path string) (Module, error) {
	t, err := fileid.Bounded(path, func() (*Table, error) { return c.get(path, fileid.OpenNoFollow) })
	if err != nil {
		return Module{}, err
	}
	bias, err := LoadBias(t.Loads, m)
	if err != nil {
		return Module{}, err
	}
	return Module{Start: m.Start, End: m.End, Bias: bias, Path: m.Path, Table: t, Offset: m.Offset, Dev: m.Dev, Inode: m.Inode, File: path}, nil
}

// Process reads /proc/PID/maps and resolves the process's modules.
func (c *Cache) Process(pid int) ([]Module, []error, error) {
	maps, err := ReadMaps(pid)
	if err != nil {
		return nil, nil, err
	}
	mods, errs := c.Modules(maps, func(m procmaps.Mapping) (string, error) { return procmaps.File("", pid, m) })
	return mods, errs, nil
}
