package unwind

import (
	"fmt"
	"math"
)

// CFAType says how to compute the canonical frame address (the caller's
// rsp): enum cfa_type in bpf/probee.h, which bpf's TestUnwindRuleKinds
// compares with these constants.
type CFAType uint8

const (
	// CFANone: no unwind information covers this pc (a gap between FDEs or
	// past a function's end). Lookup reports false for it.
	CFANone CFAType = iota
	// CFARSP: CFA = rsp + CFAOffset.
	CFARSP
	// CFARBP: CFA = rbp + CFAOffset.
	CFARBP
	// CFAPLT: CFA = rsp + CFAOffset + ((rip & 15) >= PLTThreshold ? 8 : 0),
	// the expression GNU ld emits for .plt stubs.
	CFAPLT
	// CFASignal: a signal trampoline (__restore_rt, CIE augmentation 'S'):
	// rsp points at the kernel's ucontext; the interrupted rip, rsp and rbp
	// are read from its sigcontext (see SigcontextRIP etc.).
	CFASignal
	// CFAUnsupported: CFI exists but uses a rule probee does not evaluate
	// (another CFA register, an unknown expression, RA not at CFA-8). The
	// unwinder stops and marks the stack truncated.
	CFAUnsupported
	// CFAEndOfStack: the return address is undefined (DW_CFA_undefined rip,
	// as in _start and thread entry): this is the outermost frame.
	CFAEndOfStack
	// CFARSPRetRDI: CFA = rsp + CFAOffset, and the return address is in
	// rdi (DW_CFA_register rip, rdi), not at CFA-8: glibc's vfork pops it
	// there across its system call, since the child, sharing the stack,
	// would overwrite the slot. Only the interrupted frame's rdi is known,
	// so only a first frame takes this step; deeper, it stops the walk
	// as CFAUnsupported does.
	CFARSPRetRDI
	// CFARBX: CFA = rbx + CFAOffset: ld.so's lazy-binding trampolines
	// (_dl_runtime_resolve_*) align rsp down for the state they save and
	// keep the frame's address in rbx. The walk tracks where each frame
	// saved its caller's rbx (Rule.RBXSlot).
	CFARBX
	// CFAReg: CFA = the register Rule.Reg (a DWARF number, not rsp, rbp or
	// rbx) + CFAOffset: code that keeps its CFA in a scratch register for
	// a while, such as LLVM's and GCC's stack probe loops for large frames
	// (r11: rustc's run_compiler closure, 540 KiB) and OpenSSL's
	// assembly (rax, rsi, r10... in node). Only the interrupted frame's
	// registers are known, so only a first frame takes this step; deeper,
	// it stops the walk as CFAUnsupported does.
	CFAReg
)

// dwarfRegNames are the x86_64 general registers by DWARF number.
var dwarfRegNames = [16]string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// DWARF numbers of the x86_64 registers the unwinders name (the psABI's
// numbering, dwarfRegNames' order): indexes of Regs.GPR and of the
// registers in a deferred stack record (bpf).
const (
	RBX = 3
	RDI = 5
)

// RBPType says how to recover the caller's rbp (enum rbp_type in
// bpf/probee.h, compared as CFAType is).
type RBPType uint8

const (
	RBPSame      RBPType = iota // rbp is unchanged in the caller
	RBPOffset                   // caller's rbp = *(CFA + RBPOffset)
	RBPUndefined                // caller's rbp is unknown
)

// Offsets of the interrupted registers from rsp inside a signal frame on
// x86_64 Linux: rsp points at struct ucontext (uc_flags, uc_link, uc_stack =
// 40 bytes) followed by struct sigcontext (r8..r15, rdi, rsi, rbp, rbx, rdx,
// rax, rcx, rsp, rip).
const (
	SigcontextRBP = 40 + 10*8
	SigcontextRBX = 40 + 11*8
	SigcontextRSP = 40 + 15*8
	SigcontextRIP = 40 + 16*8
)

// Rule is one distinct unwind rule. Its encoding is RuleSize bytes (see doc.go).
type Rule struct {
	CFA          CFAType
	RBP          RBPType
	PLTThreshold uint8 // CFAPLT only: 11 or 10
	Reg          uint8 // CFAReg only: the register's DWARF number (encoded in PLTThreshold's byte)
	RBXSlot      int8  // the caller's rbx is saved at CFA + 8*RBXSlot; 0: not saved by this frame
	CFAOffset    int32
	RBPOffset    int32 // RBPOffset only: offset from the CFA
}

func (r Rule) String() string {
	var cfa string
	switch r.CFA {
	case CFANone:
		return "none"
	case CFARSP:
		cfa = fmt.Sprintf("rsp%+d", r.CFAOffset)
	case CFARBP:
		cfa = fmt.Sprintf("rbp%+d", r.CFAOffset)
	case CFAPLT:
		cfa = fmt.Sprintf("plt(rsp%+d,%d)", r.CFAOffset, r.PLTThreshold)
	case CFASignal:
		return "signal"
	case CFAUnsupported:
		return "unsupported"
	case CFAEndOfStack:
		return "end"
	case CFARSPRetRDI:
		cfa = fmt.Sprintf("rsp%+d ra=rdi", r.CFAOffset)
	case CFARBX:
		cfa = fmt.Sprintf("rbx%+d", r.CFAOffset)
	case CFAReg:
		cfa = fmt.Sprintf("%s%+d", dwarfRegNames[r.Reg&15], r.CFAOffset)
	default:
		cfa = fmt.Sprintf("cfa?%d", r.CFA)
	}
	switch r.RBP {
	case RBPOffset:
		cfa += fmt.Sprintf(" rbp=c%+d", r.RBPOffset)
	case RBPUndefined:
		cfa += " rbp=u"
	}
	if r.RBXSlot != 0 {
		cfa += fmt.Sprintf(" rbx=c%+d", 8*int(r.RBXSlot))
	}
	return cfa
}

var (
	ruleUnsupported = Rule{CFA: CFAUnsupported}
	ruleEnd         = Rule{CFA: CFAEndOfStack}
	ruleSignal      = Rule{CFA: CFASignal}
)

// setRule reduces a CFI row to an x86_64 rule, written to *r (written in
// place: building libLLVM-14's table sets 860,973 rules).
func setRule(r *Rule, st *frameState, signal bool) {
	if signal {
		*r = ruleSignal
		return
	}
	if st.ra.kind == regUndef {
		*r = ruleEnd
		return
	}
	ok := st.ra.kind == regOffset && st.ra.off == -8
	if ok {
		*r, ok = cfaRuleOf(&st.cfa)
	} else if st.ra.kind == regRegister && st.ra.off == RDI {
		*r, ok = cfaRuleOf(&st.cfa)
		ok = ok && r.CFA == CFARSP
		r.CFA = CFARSPRetRDI
	}
	switch {
	case !ok:
		*r = ruleUnsupported
	case st.rbp.kind == regUnspec || st.rbp.kind == regSame:
		r.RBP = RBPSame
	case st.rbp.kind != regOffset:
		r.RBP = RBPUndefined
	case st.rbp.off < math.MinInt32 || st.rbp.off > math.MaxInt32:
		*r = ruleUnsupported
	default:
		r.RBP, r.RBPOffset = RBPOffset, int32(st.rbp.off)
	}
	if r.CFA != CFAUnsupported {
		r.RBXSlot = rbxSlot(&st.rbx)
	}
}

// rbxSlot is where a frame saved its caller's rbx, in words from the CFA
// (Rule.RBXSlot); 0 when it did not, or the offset is not a word within
// 1 KiB below the CFA (compilers save it among the first pushes).
func rbxSlot(r *regRule) int8 {
	if r.kind != regOffset || r.off%8 != 0 || r.off >= 0 || r.off < -128*8 {
		return 0
	}
	return int8(r.off / 8)
}

func cfaRuleOf(c *cfaRule) (Rule, bool) {
	if c.expr != nil {
		off, thr, ok := matchPLT(c.expr)
		return Rule{CFA: CFAPLT, PLTThreshold: thr, CFAOffset: off}, ok
	}
	if c.off < math.MinInt32 || c.off > math.MaxInt32 {
		return Rule{}, false
	}
	switch c.reg {
	case regRSP:
		return Rule{CFA: CFARSP, CFAOffset: int32(c.off)}, true
	case regRBP:
		return Rule{CFA: CFARBP, CFAOffset: int32(c.off)}, true
	case regRBX:
		return Rule{CFA: CFARBX, CFAOffset: int32(c.off)}, true
	}
	if c.reg < uint64(len(dwarfRegNames)) {
		return Rule{CFA: CFAReg, Reg: uint8(c.reg), CFAOffset: int32(c.off)}, true
	}
	return Rule{}, false
}

// matchPLT recognises the .plt CFA expression
//
//	DW_OP_breg7 (rsp) N; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
//	DW_OP_lit11|lit10; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
//
// and returns N and the threshold.
func matchPLT(e []byte) (int32, uint8, bool) {
	r := &reader{buf: e}
	if r.u8() != 0x77 { // DW_OP_breg7
		return 0, 0, false
	}
	off := r.sleb()
	if r.u8() != 0x80 || r.sleb() != 0 || r.u8() != 0x3f || r.u8() != 0x1a {
		return 0, 0, false
	}
	lit := r.u8()
	if lit != 0x3b && lit != 0x3a { // DW_OP_lit11, DW_OP_lit10
		return 0, 0, false
	}
	tail := r.bytes(4)
	if r.err || r.left() != 0 || tail[0] != 0x2a || tail[1] != 0x33 || tail[2] != 0x24 || tail[3] != 0x22 {
		return 0, 0, false
	}
	if off < math.MinInt32 || off > math.MaxInt32 {
		return 0, 0, false
	}
	return int32(off), lit - 0x30, true
}
