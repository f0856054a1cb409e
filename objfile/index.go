package objfile

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// view is an object's ID and a path it was loaded under.
type view struct {
	id   fileid.ID
	path string
}

// Index caches loaded Objects for one run, keyed by file identity
// (internal/fileid: the build-id, else device, inode, size and mtime), so
// every spec and every symbolized stack reads each ELF file once, whatever
// path it is reached by. It is safe for concurrent use.
type Index struct {
	debugDir string

	objs  fileid.Cache[*Object]
	mu    sync.Mutex
	held  int                // symbols of the objects read (read)
	views map[view]*Object   // objects reached at a path other than the one read
	idle  map[fileid.ID]bool // objects not in use at the last Sweep
}

// NewIndex returns an empty index that consults separate debug files under
// debugDir ("" disables debug files).
func NewIndex(debugDir string) *Index {
	return &Index{debugDir: debugDir, views: map[view]*Object{}}
}

// Load returns the Object for path, reading each file at most once per run.
// An object first read at another path is returned with Path set to path.
func (ix *Index) Load(path string) (*Object, error) {
	return fileid.Bounded(path, func() (*Object, error) { return ix.load(path, fileid.Open) })
}

// loadMapped is Load of the path of a file a process maps
// (procmaps.File), which names no link: none is followed.
func (ix *Index) loadMapped(path string) (*Object, error) {
	return fileid.Bounded(path, func() (*Object, error) { return ix.load(path, fileid.OpenNoFollow) })
}

// load is Load without the time budget, opening path with open.
func (ix *Index) load(path string, open func(string) (fileid.ID, *safefile.File, error)) (*Object, error) {
	id, src, err := open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	o, err := ix.objs.Get(id, func() (*Object, error) {
		o, err := ix.read(src)
		if o != nil {
			o.id = id
		}
		return o, err
	})
	if err != nil || o.Path == path {
		return o, err
	}
	return ix.view(view{id, path}, o), nil
}

// view returns o under another path: the symbols are shared, the path is
// the caller's (targets attach to it, frames name it). Each path gets one
// copy, so a path always yields the same *Object.
func (ix *Index) view(v view, o *Object) *Object {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if cp := ix.views[v]; cp != nil {
		return cp
	}
	cp := *o
	cp.Path = v.path
	ix.views[v] = &cp
	return &cp
}

// LoadAll loads paths in parallel (one worker per CPU) and returns the
// objects and errors in the order of paths.
func (ix *Index) LoadAll(paths []string) ([]*Object, []error) {
	return ix.loadAll(paths, ix.Load)
}

// LoadAllMapped is LoadAll of the paths of files processes map
// (procmaps.File), which name no link: none is followed.
func (ix *Index) LoadAllMapped(paths []string) ([]*Object, []error) {
	return ix.loadAll(paths, ix.loadMapped)
}

// loadAll is LoadAll with load for each path.
func (ix *Index) loadAll(paths []string, load func(string) (*Object, error)) ([]*Object, []error) {
	objs := make([]*Object, len(paths))
	errs := make([]error, len(paths))
	work := make(chan int)
	var wg sync.WaitGroup
	n := min(runtime.GOMAXPROCS(0), len(paths))
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				objs[i], errs[i] = load(paths[i])
			}
		}()
	}
	for i := range paths {
		work <- i
	}
	close(work)
	wg.Wait()
	return objs, errs
}

// Len is how many files the index holds (views at other paths not
// counted).
func (ix *Index) Len() int { return ix.objs.Len() }

// NumSymbols is how many symbols the objects the index holds count
// against MaxSymbols.
func (ix *Index) NumSymbols() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.held
}

// MaxSymbols bounds the function symbols of all the files an Index holds
// (about 100 bytes each with their names): what a machine maps, however
// many distinct files, costs at most about 1.6 GB of symbols. The
// largest single files here: libLLVM-14 (about 60,000), a Go toolchain
// binary (about 100,000).
var MaxSymbols = 16 << 20

// read reads the object of src within MaxSymbols.
func (ix *Index) read(src *safefile.File) (*Object, error) {
	ix.mu.Lock()
	held := ix.held
	ix.mu.Unlock()
	if held >= MaxSymbols {
		return nil, fmt.Errorf("%s: %d symbols of other files held, %w of %d (objfile.MaxSymbols): not read", src.Name, held, safeelf.ErrBudget, MaxSymbols)
	}
	o, err := loadObject(src, ix.debugDir)
	if err == nil {
		ix.mu.Lock()
		ix.held += o.NumSymbols()
		ix.mu.Unlock()
	}
	return o, err
}

// Sweep drops the objects whose ID is not in inUse at this sweep and was
// not at the last one either (an object read between two sweeps gets to
// be put in use), with their views, and gives their symbols back to
// MaxSymbols and their kept Go tables back to MaxGoTables. It returns how
// many it dropped. Whoever holds the objects
// (a symbolizer) says which are in use.
func (ix *Index) Sweep(inUse map[fileid.ID]bool) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	idle, gone := map[fileid.ID]bool{}, map[fileid.ID]bool{}
	n := ix.objs.DeleteFunc(func(id fileid.ID, o *Object) bool {
		switch {
		case inUse[id]:
			return false
		case !ix.idle[id]:
			idle[id] = true
			return false
		}
		ix.held -= o.NumSymbols()
		o.dropGoTable()
		gone[id] = true
		return true
	})
	ix.idle = idle
	for v := range ix.views {
		if gone[v.id] {
			delete(ix.views, v)
		}
	}
	return n
}
