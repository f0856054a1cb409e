package unwind

import (
	"errors"

	"golang.org/x/arch/x86/x86asm"

	"github.com/probee/probee/internal/x86code"
)

// Stack-height analysis: the frame state before each instruction of a
// function no FDE covers, from its code (symframes.go finds such
// functions, heightcfi.go turns the states into CFI). It follows the
// paths from the function's entry, where the CFA is rsp+8, through every
// direct jump and branch, and tracks how far rsp and rbp are below the
// CFA: push, pop, add and sub of constants, lea, mov between rsp and
// rbp, and with rbp as the frame's base also the alignment of rsp (and
// $-64,%rsp, as hand-written SIMD code does). A call is taken to return
// with rsp where it was (callers pop their arguments in the psABI).
//
// A function gets no states at all when it moves rsp in any other way,
// reaches one instruction with two different states, returns with rsp
// anywhere but at its return address, or never returns (nor jumps out,
// with rsp at its return address, to the start of a function: a tail
// call). The last rule keeps out the .cold parts of functions, entered
// by a jump with their function's frame in place, which often end in
// calls of functions that never return (abort, _Unwind_Resume); the
// return check keeps out code whose calls pop their arguments (V8's
// JavaScript calling convention), unless rbp restores rsp before it
// returns, and then the CFA was rbp's all along. Without states, a pc
// keeps the frame-pointer walk: a wrong rule would give a wrong caller,
// where frame pointers at least may give the right one. A path ends at
// an instruction the decoder does not know (AVX-512's EVEX) or an
// indirect jump (a jump table's targets are unknown): what only such
// paths reach gets no state either.

// height is the frame state before an instruction. Offsets are below the
// CFA, in bytes: rsp = CFA - sp.
type height struct {
	sp    int32 // CFA - rsp; 0: unknown (rsp was aligned)
	bp    int32 // CFA - rbp while rbp holds a frame address; else 0
	cfaBP bool  // the CFA is rbp+bp (from mov %rsp,%rbp on), else rsp+sp
	saved int32 // the caller's rbp is at CFA - saved; 0: not saved
	dirty bool  // rbp no longer holds the caller's rbp (unknown unless saved)
}

// entryHeight is the state at a function's first instruction.
var entryHeight = height{sp: 8}

// maxHeightCode bounds the code of one function the analysis reads.
const maxHeightCode = 1 << 20

var errHeight = errors.New("stack height not followed")

// stackHeights follows the paths of code (one function, entered at its
// first byte) into a, whose buffers it reuses: a.states[off] is the state
// before the instruction at a reached off, a.lens[off] its length (0: not
// reached). It reports false when the function gets no states (see
// above) for a reason found in its code alone; the caller still checks
// that a.returns, or that one of a.tailCalls is the start of a function.
func (a *analysis) stackHeights(code []byte) bool {
	if len(code) == 0 || len(code) > maxHeightCode {
		return false
	}
	a.code, a.returns, a.tailCalls, a.indirect = code, false, a.tailCalls[:0], false
	a.states, a.lens = resize(a.states, len(code)), resize(a.lens, len(code))
	a.states[0] = entryHeight
	work := append(a.work[:0], 0)
	for len(work) > 0 {
		off := work[len(work)-1]
		work = work[:len(work)-1]
		var err error
		if work, err = a.follow(off, work); err != nil {
			return false
		}
	}
	a.work = work
	return (a.returns || len(a.tailCalls) > 0) && !overlapping(a.lens)
}

// next is where the code after the function a followed starts: past
// its last reached instruction and the padding after it (nops, int3),
// len(a.code) if none follows. A function whose paths all end in
// returns, tail calls or traps has no code past its last reached
// instruction, so what follows is another function; with an indirect
// jump (a jump table's targets are unknown) that is not known, and next
// reports false.
func (a *analysis) next() (int, bool) {
	if a.indirect {
		return 0, false
	}
	end := 0
	for off, n := range a.lens {
		if n != 0 {
			end = off + int(n)
		}
	}
	for end < len(a.code) {
		in, err := x86code.Decode(a.code[end:])
		if err != nil || in.Op != x86asm.NOP && !(in.Op == x86asm.INT && isInt3(in)) {
			break
		}
		end += in.Len
	}
	return end, true
}

// resize returns b with n zero elements, reusing its memory.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// analysis is the state of stackHeights.
type analysis struct {
	code      []byte
	states    []height
	lens      []uint8
	work      []int
	returns   bool    // a path returns
	tailCalls []int64 // where paths jump out with rsp at the return address
	indirect  bool    // a path ends in a jump through a register or memory
}

// follow decodes from off, whose state is set, recording each
// instruction's state and length, until the path ends or joins code
// already followed; it appends the branch targets to follow next to work.
func (a *analysis) follow(off int, work []int) ([]int, error) {
	for a.lens[off] == 0 {
		in, err := x86code.Decode(a.code[off:])
		if err != nil {
			return work, nil // the path ends here, unknown
		}
		a.lens[off] = uint8(in.Len)
		h := a.states[off]
		next := off + in.Len
		target, ends, err := a.control(in, h, next)
		if err != nil {
			return work, err
		}
		if target >= 0 {
			if err := a.join(target, h); err != nil {
				return work, err
			}
			work = append(work, target)
		}
		if ends || next >= len(a.code) {
			return work, nil
		}
		if h, err = step(in, h); err != nil {
			return work, err
		}
		if err := a.join(next, h); err != nil {
			return work, err
		}
		off = next
	}
	return work, nil
}

// join sets the state at off, or checks it against the state a path
// already gave it.
func (a *analysis) join(off int, h height) error {
	if a.lens[off] != 0 || reached(a.states[off]) {
		if a.states[off] != h {
			return errHeight
		}
		return nil
	}
	a.states[off] = h
	return nil
}

func reached(h height) bool { return h.sp != 0 || h.cfaBP }

// control handles the instructions that leave the straight line: target
// is a direct branch's offset inside the function (-1: none), ends says
// the path does not go on to the next instruction.
func (a *analysis) control(in x86asm.Inst, h height, next int) (target int, ends bool, err error) {
	atReturn := h.sp == 8 && !h.cfaBP
	switch {
	case in.Op == x86asm.RET:
		if !atReturn {
			return -1, true, errHeight
		}
		a.returns = true
		return -1, true, nil
	case in.Op == x86asm.UD2 || in.Op == x86asm.HLT || in.Op == x86asm.INT && isInt3(in):
		return -1, true, nil
	case x86code.IsJump(in.Op):
		rel, ok := in.Args[0].(x86asm.Rel)
		t := next + int(rel)
		ends = in.Op == x86asm.JMP
		if !ok || t < 0 || t >= len(a.code) {
			if ok && atReturn {
				a.tailCalls = append(a.tailCalls, int64(t)) // a tail call, if t is a function
			}
			a.indirect = a.indirect || !ok
			return -1, ends, nil // indirect, or out of the function
		}
		return t, ends, nil
	}
	return -1, false, nil
}

func isInt3(in x86asm.Inst) bool {
	imm, ok := in.Args[0].(x86asm.Imm)
	return ok && imm == 3
}

// overlapping reports whether a reached instruction starts inside
// another: paths that decode the same bytes differently.
func overlapping(lens []uint8) bool {
	end := 0
	for off, n := range lens {
		if n == 0 {
			continue
		}
		if off < end {
			return true
		}
		end = off + int(n)
	}
	return false
}
