package trace

import (
	"fmt"
	"iter"
	"slices"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/symbolize"
)

// stackFrames symbolizes the stacks of one profile: its samples share each
// distinct frame and stack (interned in fs), and the stacks go through
// buffers reused from stack to stack. 93K distinct stacks of ~22 frames
// (manystacks under a uprobe) held 295 MB as frame values, and their
// symbolization allocated 450 MB more. User frames come from the
// symbolizer's memo (AppendFrameRefs) and are interned once each (byRef):
// a system-wide run's ~1M stacks hold ~22M frames, a few hundred thousand
// of them distinct.
type stackFrames struct {
	sym   *symbolize.Symbolizer
	fs    output.Interner
	byRef map[*output.Frame]*output.Frame // the symbolizer's frames -> fs's
	pcs   []uint64
	refs  []*output.Frame
	res   []output.Frame
	out   []*output.Frame

	// pidless: the stacks are merged without their pids (fold.go), and a
	// bare address (a pc in no mapping known) is named "[unknown]": where
	// it is depends on its process's address space (ASLR), so once
	// merged it names nothing, and a long run whose mapping records were
	// lost under load made a new frame and stack of every one (12,690 of
	// 35,274 lines after 5 minutes of churn; 21 MB of frames).
	pidless bool

	// marks are frames above the kernel stack by probe id: the state of
	// an --off-cpu wait ("[sleep]", ...).
	marks map[uint32]string
}

// user is c's user stack, root first, behind the marker its state calls for.
func (sf *stackFrames) user(c *bpf.Count) output.Stack {
	switch {
	case c.UserLost:
		return sf.fs.Stack([]*output.Frame{sf.marker("[user stack lost]")})
	case c.UserInExec:
		return sf.fs.Stack([]*output.Frame{sf.marker("[in execve]")})
	}
	out := sf.out[:0]
	switch {
	case c.UserExiting:
		out = append(out, sf.marker("[exiting]"))
	case c.UserTruncated:
		out = append(out, sf.marker("[truncated]"))
	}
	sf.pcs = lookupPCs(c.User.AppendPCs(sf.pcs[:0]))
	sf.refs = sf.sym.AppendFrameRefs(sf.refs[:0], c.TGID, c.Comm, sf.pcs)
	for _, r := range slices.Backward(sf.refs) {
		out = append(out, sf.ref(r))
	}
	sf.out = out
	return sf.fs.Stack(out)
}

func (sf *stackFrames) marker(name string) *output.Frame {
	return sf.fs.Intern(output.Frame{Name: name})
}

// ref is the symbolizer's frame r as fs interns it.
func (sf *stackFrames) ref(r *output.Frame) *output.Frame {
	if sf.byRef == nil {
		sf.byRef = map[*output.Frame]*output.Frame{}
	}
	f, ok := sf.byRef[r]
	if !ok {
		f = sf.fs.Intern(sf.userFrame(*r))
		sf.byRef[r] = f
	}
	return f
}

// stacks symbolizes the stacks of counts (user, kernel), in order (by
// path: bpf.Snapshot.Order) where given, and drops the counts' own (see
// tracer.profile).
func (sf *stackFrames) stacks(counts []bpf.Count, order []int32) [][2]output.Stack {
	out := make([][2]output.Stack, len(counts))
	for i := range inOrder(len(counts), order) {
		c := &counts[i]
		out[i] = [2]output.Stack{sf.user(c), sf.kernel(c)}
		c.User, c.Kernel = bpf.Stack{}, bpf.Stack{}
	}
	return out
}

// inOrder yields 0..n-1 in order (bpf.Snapshot.Order), else in turn.
func inOrder(n int, order []int32) iter.Seq[int] {
	return func(yield func(int) bool) {
		for k := range n {
			i := k
			if order != nil {
				i = int(order[k])
			}
			if !yield(i) {
				return
			}
		}
	}
}

// prefetch symbolizes the user stacks of counts object by object
// (symbolize.Symbolizer.Prefetch): the final profile, and the processes
// merged during the run (fold.go), hold one object's DWARF at a time.
// Periodic pushes do not: they would read it again at every push.
func prefetch(sym *symbolize.Symbolizer, counts []bpf.Count, order []int32) {
	var pcs []uint64
	sym.Prefetch(func(yield func(symbolize.Stack) bool) {
		for i := range inOrder(len(counts), order) {
			c := &counts[i]
			if c.UserLost || c.UserInExec || c.User.Empty() {
				continue
			}
			pcs = lookupPCs(c.User.AppendPCs(pcs[:0]))
			if !yield(symbolize.Stack{PID: c.TGID, Comm: c.Comm, PCs: pcs}) {
				return
			}
		}
	})
}

// kernel is c's kernel stack, root first, below the marker of its probe
// (marks) and, with --wakers, its waker's frames (waker).
func (sf *stackFrames) kernel(c *bpf.Count) output.Stack {
	sf.pcs = c.Kernel.AppendPCs(sf.pcs[:0])
	pcs, w := bpf.SplitWaker(sf.pcs)
	out := sf.out[:0]
	for _, f := range slices.Backward(sf.kernelFrames(pcs)) {
		out = append(out, sf.fs.Intern(f))
	}
	if m, ok := sf.marks[c.Probe]; ok {
		out = append(out, sf.marker(m))
	}
	if w != nil {
		out = sf.waker(out, w)
	}
	sf.out = out
	if len(out) == 0 {
		return output.Stack{}
	}
	return sf.fs.Stack(out)
}

// kernelFrames symbolizes a kernel stack's pcs, leaf first, without the
// frames of the BPF program that took it.
func (sf *stackFrames) kernelFrames(pcs []uint64) []output.Frame {
	if len(pcs) == 0 {
		return nil
	}
	sf.res = sf.sym.AppendKernelFrames(sf.res[:0], lookupPCs(pcs))
	return symbolize.TrimBPFFrames(sf.res)
}

// waker appends to out the frames of w, the thread that woke a wait: a
// marker naming it ("[woken by NAME]"), then its kernel frames and its
// user frames from the wake-up to the root. An interrupt's wake-up ends
// at its entry, named "interrupt": the task it interrupted did not wake
// anyone.
func (sf *stackFrames) waker(out []*output.Frame, w *bpf.Waker) []*output.Frame {
	name := w.Comm
	if name == "" {
		name = fmt.Sprintf("pid %d", w.TGID)
	}
	kernel := sf.kernelFrames(w.Kernel)
	irq := symbolize.InterruptEntry(kernel)
	if irq >= 0 {
		kernel, name = kernel[:irq+1], "interrupt"
	}
	out = append(out, sf.marker(output.WokenBy+name+"]"))
	for _, f := range kernel {
		f.Kernel = true
		out = append(out, sf.fs.Intern(f))
	}
	if irq >= 0 || len(w.User) == 0 {
		return out
	}
	sf.refs = sf.sym.AppendFrameRefs(sf.refs[:0], w.TGID, w.Comm, lookupPCs(w.User))
	for _, r := range sf.refs {
		out = append(out, sf.ref(r))
	}
	return out
}

// userFrame is the symbolizer's frame f as this profile keeps it (see
// pidless). Frames in ELF files come with their address in the file, so
// the processes of one program share their frames and stacks.
func (sf *stackFrames) userFrame(f output.Frame) output.Frame {
	if sf.pidless && f.Name == "" && f.Module == "" {
		f.Address = 0
	}
	return f
}

// lookupPCs turns captured pcs (leaf first) into addresses to symbolize,
// in place: every frame but the first is a return address, so pc-1 lies
// in the call instruction (the next instruction may belong to another
// function or line). Kernel stacks from bpf_get_stack are all return
// addresses but the leaf.
func lookupPCs(pcs []uint64) []uint64 {
	for i, pc := range pcs {
		if i > 0 && pc > 0 {
			pcs[i] = pc - 1
		}
	}
	return pcs
}
