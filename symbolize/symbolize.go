package symbolize

import (
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/kallsyms"
	"github.com/probee/probee/internal/perfmap"
	"github.com/probee/probee/objfile"
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
	scratch []Frame                         // AppendFrameRefs' buffer

	kernOnce sync.Once
	ksyms    []kallsyms.Symbol

	dw dwarfFrames
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
func (s *Symbolizer) Frames(pid int, comm string, addrs []uint64) []Frame {
	return s.AppendFrames(nil, pid, comm, addrs)
}

// AppendFrames is Frames appending to dst: a caller symbolizing many stacks
// reuses one buffer.
func (s *Symbolizer) AppendFrames(dst []Frame, pid int, comm string, addrs []uint64) []Frame {
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
// readable file maps it).
func locate(g *proctrack.Image, addr uint64) (Frame, *objfile.Object, uint64) {
	f := Frame{Addr: addr}
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
	f.ModuleOffset = addr - m.Start
	if vdsoFrame(&f, m) {
		return f, nil, 0
	}
	if !m.File() {
		return jitFrame(g.PerfMap(), f), nil, 0
	}
	f.ModuleOffset += m.Offset
	if o == nil {
		return f, nil, 0
	}
	f.BuildID = o.BuildID
	va, ok := o.VirtAddr(f.ModuleOffset)
	if !ok {
		return f, nil, 0
	}
	f.VirtAddr = va
	nameFrame(&f, o, va)
	return f, o, va
}

// nameFrame fills f's function from the virtual address va of o
// (objfile.Object.SymbolAt).
func nameFrame(f *Frame, o *objfile.Object, va uint64) {
	if sym, name := o.SymbolAt(va); sym != nil {
		f.Symbol, f.Function, f.Offset = sym.Name, name, va-sym.Addr
	}
}

// jitFrame names f from the perf map m when a line covers its address.
// The frame keeps the module of its mapping ("[anon]" when no mapping
// known covers it: code mapped after the snapshot) and has no source
// file.
func jitFrame(m *perfmap.Map, f Frame) Frame {
	sym, ok := m.Lookup(f.Addr)
	if !ok {
		return f
	}
	f.Function, f.Symbol, f.Offset = sym.Name, sym.Name, f.Addr-sym.Start
	if f.Module == "" {
		f.Module = "[anon]"
	}
	return f
}
