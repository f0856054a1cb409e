package output

import (
	"io"
	"strings"

	"github.com/probee/probee/internal/container"
)

// frameKind tells the renderer how to color a frame.
type frameKind uint8

const (
	kindMeta   frameKind = iota // probe label or comm
	kindUser                    // user-space function
	kindInline                  // user-space inlined call
	kindKernel                  // kernel function
)

// node is one rendered frame of a stack.
type node struct {
	name string
	kind frameKind
}

// sampleID identifies samples that render alike, without rendering them:
// probe, container, comm (pid for a sample without one, which renders as
// "[pid N]") and their stacks' identities.
type sampleID struct {
	probe, comm  string
	pid          int
	container    container.Info
	user, kernel Stack
}

func idOfSample(s *Sample) sampleID {
	id := sampleID{probe: s.Probe, comm: s.Comm, container: s.Container, user: s.User, kernel: s.Kernel}
	if s.Comm == "" {
		id.pid = s.PID
	}
	return id
}

// frameNames renders frames by FrameName once each: samples share their
// frames (Interner), and a profile's stacks hold many more frames than it
// has distinct ones.
type frameNames struct {
	opts Options
	m    map[frameNameKey]string
}

type frameNameKey struct {
	f      *Frame
	kernel bool
}

func (fn *frameNames) name(f *Frame, kernel bool) string {
	k := frameNameKey{f, kernel}
	if n, ok := fn.m[k]; ok {
		return n
	}
	if fn.m == nil {
		fn.m = map[frameNameKey]string{}
	}
	n := FrameName(*f, kernel, fn.opts.Lines)
	fn.m[k] = n
	return n
}

// sampleFrames renders one sample's frames root..leaf.
func sampleFrames(s *Sample, names *frameNames) []node {
	opts := names.opts
	user, kernel := s.User.Frames(), s.Kernel.Frames()
	frames := make([]node, 0, 3+len(user)+len(kernel))
	if opts.WithProbe {
		frames = append(frames, node{Sanitize(s.Probe), kindMeta})
	}
	if g := s.Container.Frame(); g != "" {
		frames = append(frames, node{Sanitize(g), kindMeta})
	}
	frames = append(frames, node{commName(s), kindMeta})
	for _, f := range user {
		frames = append(frames, node{names.name(f, false), userKind(f)})
	}
	w := wokenAt(kernel)
	for i, f := range kernel {
		if i >= w { // the waker's, each its kind (--wakers)
			frames = append(frames, node{names.name(f, false), userKind(f)})
			continue
		}
		frames = append(frames, node{names.name(f, true), kindKernel})
	}
	return frames
}

func joinNames(frames []node) string {
	n := 0
	for _, f := range frames {
		n += len(f.name) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, f := range frames {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(f.name)
	}
	return b.String()
}

// WriteCollapsed writes p as collapsed stacks, one line per distinct stack:
//
//	[probe;]comm;user frames root..leaf;kernel frames root..leaf_[k] COUNT
//
// COUNT is the stack's hits or samples; for KindLatency the nanoseconds
// its calls took from entry to return, summed; for KindWeight the sum of
// the argument over its calls.
//
// Identical lines are merged (counts summed) and lines are sorted bytewise.
// The probe label is the root frame when opts.WithProbe is set. Frame names
// follow FrameName; ';' and control characters are sanitized (see Sanitize).
func WriteCollapsed(w io.Writer, p *Profile, opts Options) error {
	return collapseTree(p, opts, nil).writeCollapsed(w)
}

// forProbe returns a filter keeping the samples of one probe label.
func forProbe(label string) func(*Sample) bool {
	return func(s *Sample) bool { return s.Probe == label }
}
