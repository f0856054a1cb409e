package symbolize

// jitMapOf returns pid's perf map: the one known (read again for what was
// appended since), else a new one read now.
func (s *Symbolizer) jitMapOf(pid int) *jitMap {
	s.mu.Lock()
	var m *jitMap
	if p := s.procs[pid]; p != nil {
		m = p.jit
	}
	s.mu.Unlock()
	if m != nil {
		m.refresh()
		return m
	}
	return s.newJITMap(pid)
}

// refreshJIT reads what was appended to p's perf map when one of addrs
// should be named by it (no file maps it) and is not yet.
func (s *Symbolizer) refreshJIT(p *procMaps, addrs []uint64) {
	s.mu.Lock()
	m, miss := p.jit, false
	if m.ended() {
		s.mu.Unlock()
		return // nothing more will be read
	}
	for _, a := range addrs {
		if m == nil || miss {
			break
		}
		if mp, ok := p.mappingAt(a); !ok || !mp.File() {
			_, found := m.lookup(a)
			miss = !found
		}
	}
	s.mu.Unlock()
	if miss {
		m.refresh()
	}
}

// jitFrame names f from the perf map when a line covers its address. The
// frame keeps the module of its mapping ("[anon]" when no mapping known
// covers it: code mapped after the snapshot) and has no source file.
func (p *procMaps) jitFrame(f Frame) Frame {
	sym, ok := p.jit.lookup(f.Addr)
	if !ok {
		return f
	}
	f.Function, f.Symbol, f.Offset = sym.Name, sym.Name, f.Addr-sym.Start
	if f.Module == "" {
		f.Module = "[anon]"
	}
	return f
}
