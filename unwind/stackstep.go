package unwind

import "golang.org/x/arch/x86/x86asm"

// What one instruction does to a function's stack height (stackheight.go).

// step is the state after in, an instruction that goes on to the next.
func step(in x86asm.Inst, h height) (height, error) {
	h, err := stepRegs(in, h)
	if err == nil && !reached(h) {
		err = errHeight // the CFA's register is lost
	}
	return h, err
}

// stepRegs follows what in does to rsp and rbp.
func stepRegs(in x86asm.Inst, h height) (height, error) {
	switch in.Op {
	case x86asm.PUSH, x86asm.PUSHFQ:
		return push(in, h)
	case x86asm.POP, x86asm.POPFQ:
		return pop(in, h)
	case x86asm.LEAVE:
		return leave(h)
	case x86asm.ENTER, x86asm.PUSHF, x86asm.POPF:
		return h, errHeight
	}
	if in.Op == x86asm.MOV {
		if slot, ok := rbpSaveSlot(in, h); ok {
			h.saved = slot
			return h, nil
		}
	}
	if writesSecond(in.Op) {
		if r, ok := in.Args[1].(x86asm.Reg); ok && (isSP(r) || isBP(r)) {
			return h, errHeight
		}
	}
	dst, ok := in.Args[0].(x86asm.Reg)
	if !ok || readsOnly(in.Op) {
		return h, nil
	}
	switch dst {
	case x86asm.RSP:
		return setRSP(in, h)
	case x86asm.ESP, x86asm.SP, x86asm.SPB:
		return h, errHeight
	case x86asm.RBP, x86asm.EBP, x86asm.BP, x86asm.BPB:
		return setRBP(in, h)
	}
	return h, nil
}

// writesSecond reports whether op writes its second operand too.
func writesSecond(op x86asm.Op) bool {
	return op == x86asm.XCHG || op == x86asm.XADD || op == x86asm.MULX
}

// readsOnly reports whether op leaves its first operand as it is.
func readsOnly(op x86asm.Op) bool {
	switch op {
	case x86asm.CMP, x86asm.TEST, x86asm.BT, x86asm.PUSH, x86asm.CALL, x86asm.NOP, x86asm.PREFETCHT0,
		x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHNTA, x86asm.PREFETCHW:
		return true
	}
	return false
}

func isSP(r x86asm.Reg) bool {
	return r == x86asm.RSP || r == x86asm.ESP || r == x86asm.SP || r == x86asm.SPB
}

func isBP(r x86asm.Reg) bool {
	return r == x86asm.RBP || r == x86asm.EBP || r == x86asm.BP || r == x86asm.BPB
}

func push(in x86asm.Inst, h height) (height, error) {
	if in.DataSize == 16 {
		return h, errHeight
	}
	if h.sp == 0 {
		return h, nil // rbp holds the CFA; rsp stays unknown
	}
	h.sp += 8
	if r, ok := in.Args[0].(x86asm.Reg); ok && r == x86asm.RBP && h.saved == 0 && !h.dirty {
		h.saved = h.sp
	}
	return h, nil
}

func pop(in x86asm.Inst, h height) (height, error) {
	if in.DataSize == 16 || h.sp != 0 && h.sp <= 8 {
		return h, errHeight
	}
	r, _ := in.Args[0].(x86asm.Reg)
	switch {
	case isSP(r):
		return h, errHeight
	case r == x86asm.RBP:
		h = restoreRBP(h, h.sp)
	case isBP(r):
		h = clobberRBP(h)
	}
	if h.sp != 0 {
		h.sp -= 8
	}
	return h, nil
}

// leave is mov %rbp,%rsp; pop %rbp.
func leave(h height) (height, error) {
	if h.bp <= 8 {
		return h, errHeight
	}
	h.sp = h.bp
	h = restoreRBP(h, h.sp)
	h.sp -= 8
	return h, nil
}

// restoreRBP is the state after rbp is loaded from CFA - slot: the
// caller's rbp again when that is where it was saved.
func restoreRBP(h height, slot int32) height {
	if h.saved == slot && slot != 0 {
		h.saved, h.dirty, h.bp = 0, false, 0
		h.cfaBP = false
		return h
	}
	return clobberRBP(h)
}

// clobberRBP is the state after rbp gets a value the analysis does not
// follow.
func clobberRBP(h height) height {
	h.dirty = true
	h.bp = 0
	h.cfaBP = false
	return h
}

// setRSP follows an instruction that writes rsp.
func setRSP(in x86asm.Inst, h height) (height, error) {
	switch src := in.Args[1].(type) {
	case x86asm.Imm:
		return moveRSP(in.Op, int64(src), h)
	case x86asm.Mem:
		if in.Op != x86asm.LEA || src.Segment != 0 || src.Index != 0 {
			break
		}
		if src.Base == x86asm.RSP && h.sp != 0 {
			return withSP(h, int64(h.sp)-src.Disp)
		}
		if src.Base == x86asm.RBP && h.bp != 0 {
			return withSP(h, int64(h.bp)-src.Disp)
		}
	case x86asm.Reg:
		if in.Op == x86asm.MOV && src == x86asm.RBP && h.bp != 0 {
			return withSP(h, int64(h.bp))
		}
	}
	return h, errHeight
}

// moveRSP follows add, sub or and of a constant to rsp.
func moveRSP(op x86asm.Op, imm int64, h height) (height, error) {
	switch {
	case op == x86asm.AND && h.bp != 0:
		h.sp, h.cfaBP = 0, true
		return h, nil
	case h.sp == 0 && h.cfaBP && (op == x86asm.ADD || op == x86asm.SUB):
		return h, nil
	case op == x86asm.ADD && h.sp != 0:
		return withSP(h, int64(h.sp)-imm)
	case op == x86asm.SUB && h.sp != 0:
		return withSP(h, int64(h.sp)+imm)
	}
	return h, errHeight
}

// withSP sets CFA - rsp to sp, which must leave rsp below the CFA.
func withSP(h height, sp int64) (height, error) {
	if sp < 8 || sp > maxHeightCode*64 {
		return h, errHeight
	}
	h.sp = int32(sp)
	return h, nil
}

// setRBP follows an instruction that writes rbp (or a part of it).
func setRBP(in x86asm.Inst, h height) (height, error) {
	src := in.Args[1]
	if m, ok := src.(x86asm.Mem); ok && in.Op == x86asm.MOV && in.Args[0] == x86asm.RBP &&
		m.Segment == 0 && m.Index == 0 && m.Base == x86asm.RSP && h.sp != 0 {
		return restoreRBP(h, h.sp-int32(m.Disp)), nil
	}
	bp := int64(0)
	switch {
	case in.Op == x86asm.MOV && src == x86asm.RSP && in.Args[0] == x86asm.RBP:
		bp = int64(h.sp)
	case in.Op == x86asm.LEA && in.Args[0] == x86asm.RBP:
		if m, ok := src.(x86asm.Mem); ok && m.Segment == 0 && m.Index == 0 && m.Base == x86asm.RSP && h.sp != 0 {
			bp = int64(h.sp) - m.Disp
		}
	}
	h = clobberRBP(h)
	if h.sp != 0 && bp >= 8 && bp <= int64(h.sp) {
		h.bp, h.cfaBP = int32(bp), true
	}
	return h, nil
}

// rbpSaveSlot reports where a mov saves the caller's rbp: mov %rbp,d(%rsp).
func rbpSaveSlot(in x86asm.Inst, h height) (int32, bool) {
	m, ok := in.Args[0].(x86asm.Mem)
	if !ok || in.Args[1] != x86asm.RBP || m.Segment != 0 || m.Index != 0 || m.Base != x86asm.RSP ||
		h.sp == 0 || h.saved != 0 || h.dirty {
		return 0, false
	}
	slot := int64(h.sp) - m.Disp
	return int32(slot), slot >= 8 && slot <= int64(h.sp)
}
