package output

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/probee/probee/internal/container"
)

// The spill file is a sequence of chunks (Spill.Add): the number of
// samples, then each sample as its group and its two stacks (the number
// of frames, then each frame, root first). A string, frame or group is
// written whole (after a 0) the first time a chunk names it and as its
// number + 1 after that; numbers restart with each chunk. Integers are
// varints.

// spillWriter writes one chunk; its errors stay in w (checked at Flush).
type spillWriter struct {
	w        *bufio.Writer
	strs     map[string]uint64
	frames   map[*Frame]uint64
	groups   map[uint32]uint64
	buf      []byte
	frameBuf []*Frame
}

func newSpillWriter(w *bufio.Writer) *spillWriter {
	return &spillWriter{w: w, strs: map[string]uint64{}, frames: map[*Frame]uint64{}, groups: map[uint32]uint64{}}
}

func (e *spillWriter) uint(v uint64) {
	e.buf = binary.AppendUvarint(e.buf[:0], v)
	e.w.Write(e.buf)
}

func (e *spillWriter) int(v int64) {
	e.buf = binary.AppendVarint(e.buf[:0], v)
	e.w.Write(e.buf)
}

// ref writes the number of a thing written before (and reports true),
// else a 0 and numbers it: the thing itself follows.
func ref[K comparable](e *spillWriter, m map[K]uint64, k K) bool {
	if id, ok := m[k]; ok {
		e.uint(id + 1)
		return true
	}
	m[k] = uint64(len(m))
	e.uint(0)
	return false
}

func (e *spillWriter) str(s string) {
	if ref(e, e.strs, s) {
		return
	}
	e.uint(uint64(len(s)))
	e.w.WriteString(s)
}

func (e *spillWriter) group(id uint32, g *mergeGroup) {
	if ref(e, e.groups, id) {
		return
	}
	e.str(g.probe)
	e.str(g.comm)
	e.int(int64(g.pid))
	e.str(g.container.ID)
	e.str(g.container.Cgroup)
}

func (e *spillWriter) stack(s Stack) {
	e.frameBuf = s.Append(e.frameBuf[:0])
	e.uint(uint64(len(e.frameBuf)))
	for _, f := range e.frameBuf {
		e.frame(f)
	}
}

// Frame flags.
const (
	spillKernel = 1 << iota
	spillInline
)

func (e *spillWriter) frame(f *Frame) {
	if ref(e, e.frames, f) {
		return
	}
	e.str(f.Name)
	e.str(f.Module)
	e.uint(f.Offset)
	e.str(f.File)
	e.int(int64(f.Line))
	var flags uint64
	if f.Kernel {
		flags |= spillKernel
	}
	if f.Inline {
		flags |= spillInline
	}
	e.uint(flags)
	e.uint(f.Address)
	e.str(f.BuildID)
}

// spillReader reads chunks back. Its first error stays in err; every
// length and number read is checked against the file's size and the
// chunk's tables, so a damaged file is an error, never a huge
// allocation.
type spillReader struct {
	r      *bufio.Reader
	size   int64
	fs     *Interner
	err    error
	strs   []string
	frames []*Frame
	groups []Sample // probe, pid, comm, container
	stack  []*Frame
}

func newSpillReader(r *bufio.Reader, size int64, fs *Interner) *spillReader {
	return &spillReader{r: r, size: size, fs: fs}
}

func (r *spillReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// more reports whether another chunk follows.
func (r *spillReader) more() bool {
	_, err := r.r.Peek(1)
	if err != nil && !errors.Is(err, io.EOF) {
		r.fail("%w", err)
	}
	return err == nil && r.err == nil
}

// reset starts a chunk's tables.
func (r *spillReader) reset() { r.strs, r.frames, r.groups = r.strs[:0], r.frames[:0], r.groups[:0] }

func (r *spillReader) uint() uint64 {
	v, err := binary.ReadUvarint(r.r)
	if err != nil {
		r.fail("%w", noEOF(err))
	}
	return v
}

func (r *spillReader) int() int64 {
	v, err := binary.ReadVarint(r.r)
	if err != nil {
		r.fail("%w", noEOF(err))
	}
	return v
}

// noEOF: the file ends only between chunks.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// id reads a reference into a table of n things: the index of the thing
// and false, or true when a new thing follows.
func (r *spillReader) id(n int) (int, bool) {
	v := r.uint()
	switch {
	case r.err != nil:
		return 0, false
	case v == 0:
		return 0, true
	case v > uint64(n):
		r.fail("reference %d past the %d defined", v-1, n)
		return 0, false
	}
	return int(v - 1), false
}

func (r *spillReader) str() string {
	i, isNew := r.id(len(r.strs))
	if !isNew {
		if r.err != nil {
			return ""
		}
		return r.strs[i]
	}
	n := r.uint()
	if r.err != nil || n > uint64(r.size) {
		r.fail("a string of %d bytes in a file of %d", n, r.size)
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		r.fail("%w", noEOF(err))
	}
	r.strs = append(r.strs, string(b))
	return r.strs[len(r.strs)-1]
}

func (r *spillReader) group() Sample {
	i, isNew := r.id(len(r.groups))
	if !isNew {
		if r.err != nil {
			return Sample{}
		}
		return r.groups[i]
	}
	g := Sample{Probe: r.str(), Comm: r.str(), PID: int(r.int())}
	g.Container = container.Info{ID: r.str(), Cgroup: r.str()}
	r.groups = append(r.groups, g)
	return g
}

func (r *spillReader) frame() *Frame {
	i, isNew := r.id(len(r.frames))
	if !isNew {
		if r.err != nil {
			return nil
		}
		return r.frames[i]
	}
	f := Frame{Name: r.str(), Module: r.str(), Offset: r.uint(), File: r.str(), Line: int(r.int())}
	flags := r.uint()
	f.Kernel, f.Inline = flags&spillKernel != 0, flags&spillInline != 0
	f.Address, f.BuildID = r.uint(), r.str()
	p := r.fs.Intern(f)
	r.frames = append(r.frames, p)
	return p
}

func (r *spillReader) readStack() Stack {
	n := r.uint()
	if r.err != nil || n > uint64(r.size) {
		r.fail("a stack of %d frames in a file of %d bytes", n, r.size)
		return Stack{}
	}
	r.stack = r.stack[:0]
	for range n {
		r.stack = append(r.stack, r.frame())
		if r.err != nil {
			return Stack{}
		}
	}
	return r.fs.Stack(r.stack)
}

// sample reads one sample, without its counts.
func (r *spillReader) sample() Sample {
	s := r.group()
	s.User = r.readStack()
	s.Kernel = r.readStack()
	return s
}
