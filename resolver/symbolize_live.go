package resolver

import "sort"

// AddMapping records one executable file mapping of pid as the kernel
// reported it when it was created (bpf.MmapWatcher). Processes that exit
// before Snapshot can read /proc/PID/maps are symbolized from these. The
// mapping's ELF object is loaded lazily, when Frames first needs it.
func (s *Symbolizer) AddMapping(pid int, m Mapping) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[pid]
	if p == nil {
		p = &procMaps{open: map[string]*Object{}}
		s.procs[pid] = p
	}
	p.insert(m)
}

// ExecReset forgets pid's mappings: it exec'd and has a new address space.
func (s *Symbolizer) ExecReset(pid int) { s.Forget(pid) }

// insert adds m, dropping older mappings it overlaps (MAP_FIXED remaps).
func (p *procMaps) insert(m Mapping) {
	kept := p.maps[:0]
	for _, old := range p.maps {
		if old.End <= m.Start || old.Start >= m.End {
			kept = append(kept, old)
		}
	}
	i := sort.Search(len(kept), func(i int) bool { return kept[i].Start >= m.Start })
	kept = append(kept, Mapping{})
	copy(kept[i+1:], kept[i:])
	kept[i] = m
	p.maps = kept
}

// loadMissing loads the objects of mappings added without one.
func (s *Symbolizer) loadMissing(p *procMaps) {
	s.mu.Lock()
	var paths []string
	for _, m := range p.maps {
		if _, ok := p.open[m.Path]; !ok && m.File() && !m.Deleted {
			p.open[m.Path] = nil
			paths = append(paths, m.Path)
		}
	}
	s.mu.Unlock()
	if len(paths) == 0 {
		return
	}
	objs, _ := s.idx.LoadAll(s.r.rootPaths(paths))
	s.mu.Lock()
	for i, path := range paths {
		p.open[path] = objs[i]
	}
	s.mu.Unlock()
}

func (r *Resolver) rootPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = r.rootPath(p)
	}
	return out
}
