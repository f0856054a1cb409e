package proctrack

import (
	"slices"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// The objects of the files a process maps are read while it lives
// (SnapshotMaps, preload): by the path that opens the mapped file
// (procmaps.File), which may be gone with the process (a container's
// root). Those of mappings known only from records, with a path that
// names the file in probee's view too, wait until a stack needs them
// (loadMissing).

// mappedFile is the path that opens the file m (a mapping of pid) maps.
func (h *History) mappedFile(pid int, m procmaps.Mapping) (string, error) {
	return procmaps.File(h.proc.root, pid, m)
}

// load reads the objects of pid's file mappings, each opened by the path
// that names the mapped file (see mappedFile). A mapping whose file no
// path opens any more (the process exited, and its path is relative to a
// root that is gone with it: a container) gets the object already read
// for the same file (device and inode) from another mapping, if any; nil
// otherwise.
func (h *History) load(pid int, files []procmaps.Mapping) []*objfile.Object {
	out := make([]*objfile.Object, len(files))
	var paths []string
	var idx []int
	for i, m := range files {
		p, err := h.mappedFile(pid, m)
		if err != nil {
			h.mu.Lock()
			out[i] = h.byFile[m.FileKey()]
			h.mu.Unlock()
			continue
		}
		paths, idx = append(paths, p), append(idx, i)
	}
	objs, errs := h.idx.LoadAllMapped(paths)
	for _, err := range errs {
		h.warn.Budget(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for j, o := range objs {
		if o != nil {
			out[idx[j]] = o
			h.byFile[files[idx[j]].FileKey()] = o
		}
	}
	return out
}

// maxPreloads is how many preloads may wait; a burst beyond it leaves the
// rest to ImageOf.
const maxPreloads = 4096

// preloadReq is a mapping to read while its process lives.
type preloadReq struct {
	pid int
	m   procmaps.Mapping
}

// preload reads soon, while pid lives, the object of a mapping whose path
// does not name the mapped file in probee's view: a container's path (the
// kernel's records give paths relative to the mapping process's root), or
// a file deleted since. Once pid is gone, such a file is found only among
// the objects already read (byFile). One goroutine reads them, started
// when the first waits: the record reader does not wait.
func (h *History) preload(pid int, m procmaps.Mapping) {
	if procmaps.Shown(h.proc.root, m) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.preloads) >= maxPreloads {
		return
	}
	h.preloads = append(h.preloads, preloadReq{pid, m})
	if !h.preloading {
		h.preloading = true
		go h.runPreloads()
	}
}

// runPreloads reads the waiting mappings' objects until none wait.
func (h *History) runPreloads() {
	for {
		h.mu.Lock()
		batch := h.preloads
		h.preloads = nil
		if len(batch) == 0 {
			h.preloading = false
		}
		h.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		for _, r := range batch {
			h.load(r.pid, []procmaps.Mapping{r.m})
		}
	}
}

// loadMissing loads the objects of pid's mappings added without one.
func (h *History) loadMissing(pid int, p *Image) {
	h.mu.Lock()
	if p.loaded {
		h.mu.Unlock()
		return
	}
	p.loaded = true
	files := p.missingFiles()
	if len(files) == 0 { // a set shared with its parent stays shared
		h.mu.Unlock()
		return
	}
	p.own()
	for _, m := range files {
		p.open[m.Path] = nil // being loaded
	}
	h.mu.Unlock()
	objs := h.load(pid, files)
	h.mu.Lock()
	p.own() // a fork may have shared them meanwhile
	for i, m := range files {
		p.open[m.Path] = objs[i]
	}
	p.changed()
	h.mu.Unlock()
}

// missingFiles returns p's file mappings that have had no object loaded
// (or tried), one per path.
func (p *Image) missingFiles() []procmaps.Mapping {
	var files []procmaps.Mapping
	for _, m := range p.maps {
		if _, ok := p.open[m.Path]; !ok && m.File() &&
			!slices.ContainsFunc(files, func(f procmaps.Mapping) bool { return f.Path == m.Path }) {
			files = append(files, m)
		}
	}
	return files
}
