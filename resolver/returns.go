package resolver

import (
	"errors"
	"fmt"

	"github.com/probee/probee/internal/safefile"
	"github.com/probee/probee/internal/x86code"
	"golang.org/x/arch/x86/x86asm"
)

// Where the returns of a function are probed.
//
// A uretprobe replaces the return address on the stack with the kernel's
// trampoline until the function returns. Whatever walks the stack in the
// meantime finds the trampoline instead of the caller: Go's runtime,
// which walks and moves goroutine stacks, throws "unexpected return pc"
// and kills the program, and libgcc's unwinder finds no frame for it, so
// an exception thrown through the function ends in std::terminate (both
// measured: ret: on runtime.newobject of the go command, and on a C++
// function that throws). A uprobe on each RET instruction of the function
// sees its returns without touching the stack. It misses a return made by
// a jump to another function (a tail call), which a uretprobe sees.

// Returns is what decoding a function's code found about its returns.
type Returns struct {
	RETs []uint64 // offsets of its RET instructions, increasing
	// Exits are the targets of jumps that leave the code, relative to
	// its start: tail calls, or jumps into its .cold part.
	Exits []int64
	// Indirect: a jump goes through a register or memory (a jump table,
	// or a tail call), so a return may not pass through one of RETs.
	Indirect bool
}

// MaxFunctionCode bounds the code DecodeReturns reads for one function.
const MaxFunctionCode = 1 << 20

// ErrUndecodable means a function's code has an instruction the decoder
// does not know, so its RET instructions cannot all be found.
var ErrUndecodable = x86code.ErrUndecodable

// DecodeReturns decodes the x86-64 code of one function (or one part of
// it), from its first byte to its end, and finds its RET instructions and
// the jumps that leave it. It never panics, whatever the bytes.
func DecodeReturns(code []byte) (Returns, error) {
	var r Returns
	for off := 0; off < len(code); {
		in, err := x86code.Decode(code[off:])
		if err != nil {
			return r, fmt.Errorf("%w at +0x%x (% x)", err, off, code[off:min(off+6, len(code))])
		}
		next := off + in.Len
		switch {
		case in.Op == x86asm.RET:
			r.RETs = append(r.RETs, uint64(off))
		case x86code.IsJump(in.Op):
			rel, ok := in.Args[0].(x86asm.Rel)
			t := int64(next) + int64(rel)
			switch {
			case !ok:
				r.Indirect = true
			case t < 0 || t >= int64(len(code)):
				r.Exits = append(r.Exits, t)
			}
		}
		off = next
	}
	return r, nil
}

// NoReturnsError says why the returns of a Go function cannot be probed.
type NoReturnsError struct {
	AttachPoint AttachPoint
	Err         error
}

func (e *NoReturnsError) Error() string {
	return fmt.Sprintf("cannot probe the returns of %s in Go binary %s: %v; a uretprobe there would crash the program "+
		"(Go moves goroutine stacks): probe its entry instead (drop ret:), or its callers", e.AttachPoint.Symbol, e.AttachPoint.Path, e.Err)
}

func (e *NoReturnsError) Unwrap() error { return e.Err }

// ReturnAttachPoints returns the probes that see the returns of function
// target t (an entry: not Ret, no offset), each a copy of t:
//   - in a Go binary, one probe on each RET instruction (RetInsn, Offset
//     into the function); a *NoReturnsError when it has none or its code
//     cannot be decoded: a uretprobe would crash the program;
//   - with preferRET, the same for other functions whose every way out is
//     a RET (no tail call, no jump through a register), so an exception
//     or a stack walk passing a call in flight finds its real return
//     address; the RETs of the function's .cold part (code gcc split off
//     it, which it jumps to) are its own, named after the part;
//   - otherwise a uretprobe (Ret).
func (r *Resolver) ReturnAttachPoints(t AttachPoint, preferRET bool) ([]AttachPoint, error) {
	uret := t
	uret.Ret, uret.Offset = true, 0
	if !t.Go && !preferRET {
		return []AttachPoint{uret}, nil
	}
	parts, err := r.functionParts(t)
	if err == nil {
		err = decodeParts(parts)
	}
	n := 0
	for _, p := range parts {
		n += len(p.rets.RETs)
	}
	switch {
	case t.Go && err != nil:
		return nil, &NoReturnsError{t, err}
	case t.Go && n == 0:
		return nil, &NoReturnsError{t, errors.New("it has no RET instruction (it never returns, or leaves by a jump)")}
	case !t.Go && (err != nil || n == 0 || leavesByJump(parts)):
		return []AttachPoint{uret}, nil
	}
	var out []AttachPoint
	for _, p := range parts {
		for _, off := range p.rets.RETs {
			rt := p.target
			rt.Ret, rt.RetInsn, rt.Offset = false, true, off
			out = append(out, rt)
		}
	}
	return out, nil
}

// part is a function's code, or its .cold part's.
type part struct {
	target AttachPoint // the function, or its part: Symbol, Address, FileOffset, Size
	code   []byte
	rets   Returns
}

// functionParts reads the code of t's function and of its .cold parts.
func (r *Resolver) functionParts(t AttachPoint) ([]part, error) {
	targets := []AttachPoint{t}
	if o, err := r.idx.Load(t.Path); err == nil {
		for _, c := range o.ColdParts(t.Symbol) {
			ct := t
			ct.Symbol, ct.Address, ct.Size = c.Name, c.Addr, c.Size
			var ok bool
			if ct.FileOffset, ok = o.FileOffset(c.Addr); ok {
				targets = append(targets, ct)
			}
		}
	}
	f, err := safefile.Open(t.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var parts []part
	for _, pt := range targets {
		code, err := readCode(f, pt)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{target: pt, code: code})
	}
	return parts, nil
}

func readCode(f *safefile.File, t AttachPoint) ([]byte, error) {
	if t.Size == 0 {
		return nil, fmt.Errorf("%s has no size in the symbol table", t.Symbol)
	}
	if t.Size > MaxFunctionCode {
		return nil, fmt.Errorf("%s is %d bytes long, more than the %d decoded", t.Symbol, t.Size, MaxFunctionCode)
	}
	code := make([]byte, t.Size)
	if _, err := f.ReadAt(code, int64(t.FileOffset)); err != nil {
		return nil, fmt.Errorf("read the code of %s: %w", t.Symbol, err)
	}
	return code, nil
}

func decodeParts(parts []part) error {
	for i := range parts {
		var err error
		if parts[i].rets, err = DecodeReturns(parts[i].code); err != nil {
			return fmt.Errorf("%s: %w", parts[i].target.Symbol, err)
		}
	}
	return nil
}

// leavesByJump reports whether a jump leaves the function's parts, or
// goes through a register.
func leavesByJump(parts []part) bool {
	for _, p := range parts {
		if p.rets.Indirect {
			return true
		}
		for _, e := range p.rets.Exits {
			if !inParts(parts, p.target.Address+uint64(e)) {
				return true
			}
		}
	}
	return false
}

func inParts(parts []part, addr uint64) bool {
	for _, p := range parts {
		if addr >= p.target.Address && addr < p.target.Address+p.target.Size {
			return true
		}
	}
	return false
}
