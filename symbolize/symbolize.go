package symbolize

import (
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/kallsyms"
	"github.com/probee/probee/internal/perfmap"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
	"github.com/probee/probee/proctrack"
)

// Symbolizer turns addresses into frames. A process's addresses are named
// from the image that ran them, in the processes' mapping history
// (proctrack.History), which keeps them after the process exits or execs.
// Objects are shared through the Index (one read per file identity). Safe
// for concurrent use.
type Symbolizer struct {
	hist         *proctrack.History
	idx          *objfile.Index
	kallsymsPath string
	warn         *fileid.Warnings

	mu      sync.Mutex
	memos   map[*proctrack.Image]*frameMemo // frames of each image's addresses (framememo.go)
	unknown *frameMemo                      // frames of addresses of pids unknown and gone
	objMemo *objectMemo                     // frames in ELF files (framememo.go)
	evicted evictions                       // sweeps of the frame memos (evict.go)
	scratch []output.Frame                  // AppendFrameRefs' buffer

	kernOnce sync.Once
	ksyms    []kallsyms.Symbol

	dw  dwarfFrames
	hot hotDWARF // DWARF kept across Prefetch calls (hotdwarf.go)
}

// History is the mapping history the Symbolizer names processes'
// addresses from: a proctrack.Tracker keeps it up to date.
func (s *Symbolizer) History() *proctrack.History { return s.hist }

// Frames symbolizes user addresses of pid, counted under comm ("": any),
// exactly as given: callers pass pc-1 for return addresses. A pid never
// seen is read from /proc first. comm picks the image that ran the stack
// when the process exec'd since (proctrack.History.ImageOf).
// Frames are leaf first. Where the object has DWARF, frames carry File and
// Line, and an address inside inlined calls expands into one Inline frame
// per call, innermost first, before its physical frame (see SetInline): the
// result may then be longer than addrs.
func (s *Symbolizer) Frames(pid int, comm string, addrs []uint64) []output.Frame {
	return s.AppendFrames(nil, pid, comm, addrs)
}

// AppendFrames is Frames appending to dst: a caller symbolizing many stacks
// reuses one buffer.
func (s *Symbolizer) AppendFrames(dst []output.Frame, pid int, comm string, addrs []uint64) []output.Frame {
	g := s.hist.ImageOf(pid, comm, addrs)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range addrs {
		f, o, va := locate(g, a)
		dst = s.dw.expand(dst, f, o, va)
	}
	return dst
}

// locate symbolizes addr of image g (nil: unknown) from the ELF symbols
// and returns the object and virtual address it falls in (nil when no
// readable file maps it). The frame's Address is addr until it is found
// in an ELF file, then its address in the file.
func locate(g *proctrack.Image, addr uint64) (output.Frame, *objfile.Object, uint64) {
	f := output.Frame{Address: addr}
	if g == nil {
		return f, nil, 0
	}
	m, o, ok := g.At(addr)
	if !ok {
		return jitFrame(g.PerfMap(), f), nil, 0
	}
	f.Module = m.Path
	if m.Path == "" {
		f.Module = "[anon]"
	}
	f.Offset = addr - m.Start
	if vdsoFrame(&f, m) {
		return f, nil, 0
	}
	if !m.File() {
		return jitFrame(g.PerfMap(), f), nil, 0
	}
	f.Offset += m.Offset
	if o == nil {
		return f, nil, 0
	}
	f.BuildID = o.BuildID
	va, ok := o.VirtAddr(f.Offset)
	if !ok {
		return f, nil, 0
	}
	f.Address = va
	nameFrame(&f, o, va)
	return f, o, va
}

// nameFrame fills f's function from the virtual address va of o
// (objfile.Object.SymbolAt) and returns the function's address (0 when
// no symbol holds va).
func nameFrame(f *output.Frame, o *objfile.Object, va uint64) uint64 {
	sym, name := o.SymbolAt(va)
	if sym == nil {
		return 0
	}
	f.Name = name
	return sym.Addr
}

// jitFrame names f from the perf map m when a line covers its address.
// The frame keeps the module of its mapping ("[anon]" when no mapping
// known covers it: code mapped after the snapshot) and has no source
// file.
func jitFrame(m *perfmap.Map, f output.Frame) output.Frame {
	sym, ok := m.Lookup(f.Address)
	if !ok {
		return f
	}
	f.Name = sym.Name
	if f.Module == "" {
		f.Module = "[anon]"
	}
	return f
}
