package symbolize

import (
	"fmt"
	"sync"

	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
)

// dwarfFrames expands frames with the DWARF of their objects. The DWARF
// itself is cached with each Object (objfile.Object.SourceAt), so the
// Index's one entry per file serves it too: one library mapped by many
// processes, or at several paths, is parsed once.
type dwarfFrames struct {
	mu       sync.Mutex
	noInline bool
	warn     func(error) bool // fileid.Warnings.Budget
}

// SetInline turns the expansion of inlined calls into their own frames on
// (the default) or off. With it off, a frame still gets the file and line
// of the physical function: the line of the outermost inlined call site.
func (s *Symbolizer) SetInline(on bool) {
	s.dw.mu.Lock()
	s.dw.noInline = !on
	s.dw.mu.Unlock()
}

// inlineOff reports whether SetInline turned inline frames off.
func (c *dwarfFrames) inlineOff() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.noInline
}

// expand appends f to out, preceded by its inlined calls when o's DWARF
// has them for va, with files and lines filled in.
func (c *dwarfFrames) expand(out []output.Frame, f output.Frame, o *objfile.Object, va uint64) []output.Frame {
	if o == nil {
		return append(out, f)
	}
	src := o.SourceAt(va)
	if err := o.DWARFWarning(); err != nil && c.warn != nil {
		c.warn(err)
	}
	if len(src) == 0 {
		return append(out, f)
	}
	noInline := c.inlineOff()
	// The physical frame carries the line of the outermost inlined call
	// site (or of va itself when nothing is inlined there).
	phys := src[len(src)-1]
	if !noInline {
		for _, s := range src[:len(src)-1] {
			in := f
			in.Name, in.File, in.Line, in.Inline = s.Name, s.File, s.Line, true
			out = append(out, in)
		}
	}
	if f.Name == "" {
		f.Name = phys.Name
	}
	f.File, f.Line = phys.File, phys.Line
	return append(out, f)
}

// ObjectFrames symbolizes virtual addresses (as in the ELF file, before
// any load bias) of the ELF file at path, with DWARF lines and inlined
// calls like Frames: leaf first per address, in the order of vaddrs. It
// reads only files: tests and tools use it as a pure addr2line.
func (s *Symbolizer) ObjectFrames(path string, vaddrs []uint64) ([]output.Frame, error) {
	o, err := s.idx.Load(path)
	if err != nil {
		return nil, fmt.Errorf("symbolize %s: %w", path, err)
	}
	var out []output.Frame
	for _, va := range vaddrs {
		f := output.Frame{Address: va, Module: o.Path, BuildID: o.BuildID}
		f.Offset, _ = o.FileOffset(va)
		nameFrame(&f, o, va)
		out = s.dw.expand(out, f, o, va)
	}
	return out, nil
}
