package resolver

import (
	"fmt"
	"sync"

	"github.com/probee/probee/internal/fileid"
	"github.com/probee/probee/internal/gopclntab"
)

// dwarfFrames expands frames with the DWARF of their objects. The DWARF
// itself is cached with each Object (lazyDWARF), so the Index's one entry
// per file serves it too: one library mapped by many processes, or at
// several paths, is parsed once.
type dwarfFrames struct {
	mu       sync.Mutex
	noInline bool
	warn     func(error) bool // Resolver.limitWarning
}

// lazyDWARF is an object's DWARF, read when first needed, and again after
// a release (Prefetch); for a Go binary without DWARF, its .gopclntab
// (gosource.go) instead.
type lazyDWARF struct {
	mu   sync.Mutex
	read bool
	info *dwarfInfo
	gtab *gopclntab.Table
	err  error // why it was not read (a budget), until said
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

// sources returns o's DWARF, reading it on first use; nil when o has none
// (neither in the file nor in its separate debug file). A Go binary
// without DWARF gets its .gopclntab instead (nil DWARF, non-nil table).
func (o *Object) sources() (*dwarfInfo, *gopclntab.Table) {
	l := o.dwarf
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.read {
		// Within the file's time budget: what is not read by then is not
		// waited for again (the lock is held while reading).
		l.info, l.err = fileid.Bounded(o.Path, func() (*dwarfInfo, error) { return openDWARFInfo(o.files()) })
		if l.info == nil && o.Go {
			l.gtab, _ = fileid.Bounded(o.Path, func() (*gopclntab.Table, error) { return openGoTable(o.files()[0]), nil })
		}
		l.read = true
	}
	return l.info, l.gtab
}

// srcFrames returns the source frames of va: from o's DWARF, else from a
// Go binary's .gopclntab; nil when neither covers it.
func (o *Object) srcFrames(va uint64) []srcFrame {
	info, gtab := o.sources()
	if info != nil {
		return info.lookup(va)
	}
	return goSrcFrames(gtab, va)
}

// unsaid returns why the DWARF was not read, once.
func (l *lazyDWARF) unsaid() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	l.err = nil
	return err
}

// releaseDWARF lets go of o's DWARF; the next use reads it again.
func (o *Object) releaseDWARF() {
	l := o.dwarf
	l.mu.Lock()
	l.info, l.gtab, l.read = nil, nil, false
	l.mu.Unlock()
}

// expand appends f to out, preceded by its inlined calls when o's DWARF
// has them for va, with files and lines filled in.
func (c *dwarfFrames) expand(out []Frame, f Frame, o *Object, va uint64) []Frame {
	if o == nil {
		return append(out, f)
	}
	src := o.srcFrames(va)
	if err := o.dwarf.unsaid(); err != nil && c.warn != nil {
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
			in.Function, in.Symbol, in.Offset = s.Name, s.Symbol, 0
			in.File, in.Line, in.Inline = s.File, s.Line, true
			out = append(out, in)
		}
	}
	if f.Function == "" && phys.Name != "" {
		f.Function, f.Symbol = phys.Name, phys.Symbol
	}
	f.File, f.Line = phys.File, phys.Line
	return append(out, f)
}

// ObjectFrames symbolizes virtual addresses (as in the ELF file, before
// any load bias) of the ELF file at path, with DWARF lines and inlined
// calls like Frames: leaf first per address, in the order of vaddrs. It
// reads only files: tests and tools use it as a pure addr2line.
func (s *Symbolizer) ObjectFrames(path string, vaddrs []uint64) ([]Frame, error) {
	o, err := s.idx.Load(path)
	if err != nil {
		return nil, fmt.Errorf("symbolize %s: %w", path, err)
	}
	var out []Frame
	for _, va := range vaddrs {
		f := Frame{Addr: va, VirtAddr: va, Module: o.Path, BuildID: o.BuildID}
		f.ModuleOffset, _ = o.FileOffset(va)
		o.symbolize(&f, va)
		out = s.dw.expand(out, f, o, va)
	}
	return out, nil
}
