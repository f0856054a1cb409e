package resolver

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// fileKey identifies one version of a file: a rebuilt binary at the same
// path gets a new key.
type fileKey struct {
	dev, ino uint64
	mtime    time.Time
	size     int64
}

type indexEntry struct {
	once sync.Once
	obj  *Object
	err  error
}

// Index caches loaded Objects for one run, keyed by (device, inode, mtime,
// size) and shared by build-id, so every spec and every symbolized stack
// reads each ELF file once. It is safe for concurrent use.
type Index struct {
	debugDir string

	mu      sync.Mutex
	byKey   map[fileKey]*indexEntry
	byBuild map[string]*Object
}

// NewIndex returns an empty index that consults separate debug files under
// debugDir ("" disables debug files).
func NewIndex(debugDir string) *Index {
	return &Index{debugDir: debugDir, byKey: map[fileKey]*indexEntry{}, byBuild: map[string]*Object{}}
}

func statKey(path string) (fileKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileKey{}, err
	}
	k := fileKey{mtime: st.ModTime(), size: st.Size()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(sys.Dev), sys.Ino
	}
	return k, nil
}

// Load returns the Object for path, reading it at most once per run.
func (ix *Index) Load(path string) (*Object, error) {
	k, err := statKey(path)
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	e := ix.byKey[k]
	if e == nil {
		e = &indexEntry{}
		ix.byKey[k] = e
	}
	ix.mu.Unlock()
	e.once.Do(func() { e.obj, e.err = ix.load(path) })
	return e.obj, e.err
}

func (ix *Index) load(path string) (*Object, error) {
	o, err := LoadObject(path, ix.debugDir)
	if err != nil || o.BuildID == "" {
		return o, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if prev := ix.byBuild[o.BuildID]; prev != nil {
		// Same build at another path: share the symbols, keep our path.
		cp := *prev
		cp.Path = path
		return &cp, nil
	}
	ix.byBuild[o.BuildID] = o
	return o, nil
}

// LoadAll loads paths in parallel (one worker per CPU) and returns the
// objects and errors in the order of paths.
func (ix *Index) LoadAll(paths []string) ([]*Object, []error) {
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
				objs[i], errs[i] = ix.Load(paths[i])
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
