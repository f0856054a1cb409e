package main

import (
	"slices"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/resolver"
)

// stackFrames symbolizes the stacks of one profile: its samples share each
// distinct frame (interned in fs), and the stacks go through buffers reused
// from stack to stack. 93K distinct stacks of ~22 frames (manystacks under
// a uprobe) held 295 MB as frame values, and their symbolization
// allocated 450 MB more.
type stackFrames struct {
	sym *resolver.Symbolizer
	fs  output.Frames
	pcs []uint64
	res []resolver.Frame
}

// user is c's user stack, root first, behind the marker its state calls for.
func (sf *stackFrames) user(c bpf.Count) []*output.Frame {
	marker := func(name string) *output.Frame { return sf.fs.Intern(output.Frame{Name: name}) }
	switch {
	case c.UserLost:
		return []*output.Frame{marker("[user stack lost]")}
	case c.UserInExec:
		return []*output.Frame{marker("[in execve]")}
	}
	var head *output.Frame
	switch {
	case c.UserExiting:
		head = marker("[exiting]")
	case c.UserTruncated:
		head = marker("[truncated]")
	}
	sf.pcs = appendLookupPCs(sf.pcs[:0], c.User)
	sf.res = sf.sym.AppendFrames(sf.res[:0], c.TGID, c.Comm, sf.pcs)
	return sf.toOutput(head, sf.res, false)
}

// kernel is the kernel stack pcs (leaf first), root first.
func (sf *stackFrames) kernel(pcs []uint64) []*output.Frame {
	if len(pcs) == 0 {
		return nil
	}
	sf.pcs = appendLookupPCs(sf.pcs[:0], pcs)
	sf.res = sf.sym.AppendKernelFrames(sf.res[:0], sf.pcs)
	return sf.toOutput(nil, sf.res, true)
}

// toOutput converts leaf-first resolver frames to root-first output frames
// (inline frames, which precede their physical frame, end up after it),
// behind head unless nil.
func (sf *stackFrames) toOutput(head *output.Frame, frames []resolver.Frame, kernel bool) []*output.Frame {
	out := make([]*output.Frame, 0, len(frames)+1)
	if head != nil {
		out = append(out, head)
	}
	for _, f := range slices.Backward(frames) {
		out = append(out, sf.fs.Intern(output.Frame{
			Name: f.Function, Module: f.Module, Offset: f.ModuleOffset,
			Kernel: kernel, Address: f.Addr,
			File: f.File, Line: f.Line, Inline: f.Inline, BuildID: f.BuildID,
		}))
	}
	return out
}

// appendLookupPCs appends captured pcs (leaf first) as addresses to
// symbolize: every frame but the first is a return address, so pc-1 lies
// in the call instruction (the next instruction may belong to another
// function or line). Kernel stacks from bpf_get_stack are all return
// addresses but the leaf.
func appendLookupPCs(dst, pcs []uint64) []uint64 {
	for i, pc := range pcs {
		if i > 0 && pc > 0 {
			pc--
		}
		dst = append(dst, pc)
	}
	return dst
}
