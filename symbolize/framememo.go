package symbolize

import (
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
	"github.com/probee/probee/proctrack"
)

// Frame memos: AppendFrameRefs symbolizes each address once. A
// system-wide run symbolizes ~1M stacks of ~22 frames (12 s of malloc
// calls in a shell loop), and locating, naming and expanding the inlined
// calls of a frame costs ~250 ns; but most of those frames are the same
// few thousand places in the same few files, in hundreds of processes.
// So frames in ELF files are kept per file, path and address in the file
// (objectMemo): shared by every process, whatever its load address. Each
// image (proctrack.Image: a mapping set) has the frames of its addresses
// (frameMemo): those of ELF files from the objectMemo, the rest (JIT code
// named by a perf map, the vDSO, unknown addresses) its own; they are
// forgotten when the image, its objects or its perf map change.

// frameMemo holds the frames of one image's addresses: those in ELF
// files are the objectMemo's (the memo saves finding the file, ~40% of the
// time a frame takes when every process's addresses go to the objectMemo).
type frameMemo struct {
	frames   map[uint64][]*output.Frame // by address: the frames AppendFrames gives it
	version  uint64                     // the image's version when the memo began
	jitLines int                        // the perf map's lines then
	noInline bool                       // SetInline's setting then
}

// objectPlace is an address in an ELF file, mapped from path.
type objectPlace struct {
	o    *objfile.Object
	path string
	va   uint64
}

// objectMemo holds the frames of addresses in ELF files.
type objectMemo struct {
	frames   map[objectPlace][]*output.Frame
	noInline bool // SetInline's setting when the memo began
}

// AppendFrameRefs is AppendFrames for callers that convert each distinct
// frame once: an address's frames are symbolized once, and the same
// pointers come back for it as long as SetInline stays as it is and, for
// an address outside ELF files, its image and perf map do (then it
// is symbolized again, as AppendFrames would). A caller can key a cache
// by them. Frames in an ELF file are shared by every process mapping the
// file from the same path: their Address is the address in the file.
// Never modify a returned frame.
func (s *Symbolizer) AppendFrameRefs(dst []*output.Frame, pid int, comm string, addrs []uint64) []*output.Frame {
	g := s.hist.ImageOf(pid, comm, addrs)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maybeSweep()
	noInline := s.dw.inlineOff()
	pm := s.frameMemo(g, noInline)
	for _, a := range addrs {
		fr := pm.frames[a] // nil: never symbolized (or only seen by Prefetch)
		if fr == nil {
			fr = s.framesAt(g, a, noInline)
			pm.frames[a] = fr
		}
		dst = append(dst, fr...)
	}
	return dst
}

// framesAt symbolizes addr of image g (nil: unknown): from the memo of
// frames in ELF files when it lies in one, else into frames of its own.
// Call with s.mu held.
func (s *Symbolizer) framesAt(g *proctrack.Image, addr uint64, noInline bool) []*output.Frame {
	at, ok := placeOf(g, addr)
	if !ok {
		f, o, va := locate(g, addr)
		return s.refs(s.dw.expand(s.scratch[:0], f, o, va))
	}
	om := s.objectMemo(noInline)
	fr, ok := om.frames[at]
	if !ok {
		fr = s.placeFrames(at)
		om.frames[at] = fr
	}
	return fr
}

// placeFrames symbolizes an address in an ELF file into frames every
// process mapping the file from that path shares (Address is the address
// in the file). Call with s.mu held.
func (s *Symbolizer) placeFrames(at objectPlace) []*output.Frame {
	f := output.Frame{Address: at.va, Module: at.path, BuildID: at.o.BuildID}
	f.Offset, _ = at.o.FileOffset(at.va)
	nameFrame(&f, at.o, at.va)
	return s.refs(s.dw.expand(s.scratch[:0], f, at.o, at.va))
}

// placeOf is where addr lies in an ELF file image g maps (not the vDSO,
// whose image comes from the kernel).
func placeOf(g *proctrack.Image, addr uint64) (objectPlace, bool) {
	if g == nil {
		return objectPlace{}, false
	}
	m, o, ok := g.At(addr)
	if !ok || !m.File() || o == nil {
		return objectPlace{}, false
	}
	va, ok := o.VirtAddr(addr - m.Start + m.Offset)
	return objectPlace{o, m.Path, va}, ok
}

// refs copies frames (s.scratch, which it keeps for reuse) into frames of
// their own. Call with s.mu held.
func (s *Symbolizer) refs(frames []output.Frame) []*output.Frame {
	s.scratch = frames
	c := append([]output.Frame(nil), frames...)
	out := make([]*output.Frame, len(c))
	for i := range c {
		out[i] = &c[i]
	}
	return out
}

// objectMemo returns the memo of frames in ELF files, begun anew when
// SetInline changed. Call with s.mu held.
func (s *Symbolizer) objectMemo(noInline bool) *objectMemo {
	if s.objMemo == nil || s.objMemo.noInline != noInline {
		s.objMemo = &objectMemo{frames: map[objectPlace][]*output.Frame{}, noInline: noInline}
	}
	return s.objMemo
}

// frameMemo returns the memo of image g (nil: the pids unknown and gone),
// begun anew when g changed, its perf map has grown or SetInline changed
// since it began. Call with s.mu held.
func (s *Symbolizer) frameMemo(g *proctrack.Image, noInline bool) *frameMemo {
	m := s.unknown
	var version uint64
	var lines int
	if g != nil {
		m, version, lines = s.memos[g], g.Version(), g.PerfMap().Lines()
	}
	if m != nil && m.version == version && m.jitLines == lines && m.noInline == noInline {
		return m
	}
	m = &frameMemo{frames: map[uint64][]*output.Frame{}, version: version, jitLines: lines, noInline: noInline}
	if g == nil {
		s.unknown = m
	} else {
		s.memos[g] = m
	}
	return m
}
