package unwind

import "encoding/binary"

// Regs are the registers an unwind starts from.
// RBX is 0 where it is not known (a CFARBX frame then stops the walk).
// GPR, when set, holds the general registers of the frame at RIP by DWARF
// number: its CFAReg and CFARSPRetRDI rules need them (they are known of
// the interrupted frame only, as in the kernel's walk).
type Regs struct {
	RIP, RSP, RBP, RBX uint64
	GPR                *[16]uint64
}

// Memory reads the target's memory.
type Memory interface {
	Read64(addr uint64) (uint64, bool)
}

// StackCopy is a copy of stack memory starting at Addr.
type StackCopy struct {
	Addr uint64
	Data []byte
}

// Read64 reads a little-endian word inside the copy.
func (s StackCopy) Read64(addr uint64) (uint64, bool) {
	if addr < s.Addr || addr-s.Addr > uint64(len(s.Data)) || uint64(len(s.Data))-(addr-s.Addr) < 8 {
		return 0, false
	}
	off := addr - s.Addr
	return binary.LittleEndian.Uint64(s.Data[off:]), true
}

// StopReason says why an unwind ended.
type StopReason uint8

const (
	StopEndOfStack  StopReason = iota // outermost frame (RA undefined) or zero return address
	StopNoModule                      // pc outside every known module
	StopUnsupported                   // a CFAUnsupported rule
	StopMemory                        // a stack read failed
	StopBadFrame                      // no caller's frame: the stack pointer did not move up (or down to another stack too often), no user address
	StopMaxFrames
)

var stopNames = [...]string{"end of stack", "no module", "unsupported rule", "memory read failed", "bad frame", "max frames"}

func (s StopReason) String() string {
	if int(s) < len(stopNames) {
		return stopNames[s]
	}
	return "unknown"
}

// Step is one step of a walk: an unwound frame. PC is the instruction
// pointer (a return address for every frame but the first and frames
// interrupted by signals).
type Step struct {
	PC     uint64
	Module int  // index into the modules, -1 when unknown
	Exact  bool // PC is not a return address: symbolize PC, not PC-1
}

// Unwind walks the stack from regs the way the BPF unwinder does: find the
// module, look up pc (pc-1 for return addresses) in its table, compute the
// CFA, read the return address at CFA-8 and rbp by its rule. Modules
// without CFI (JIT code, given as modules with an empty table) and pcs
// their table does not cover are walked with frame pointers, which may
// step down to another stack MaxStackSwitches times.
func Unwind(regs Regs, mem Memory, mods []Module, maxFrames int) ([]Step, StopReason) {
	return UnwindFrom(regs, true, mem, mods, maxFrames)
}

// UnwindFrom is Unwind from a frame of a walk under way: exact says
// whether regs.RIP is the interrupted instruction (the first frame, a
// signal frame) or a return address (looked up at pc-1).
func UnwindFrom(regs Regs, exact bool, mem Memory, mods []Module, maxFrames int) ([]Step, StopReason) {
	u := unwinder{regs: regs, mem: mem, mods: mods, exact: exact}
	var frames []Step
	for len(frames) < maxFrames {
		mi := findModule(mods, u.regs.RIP)
		frames = append(frames, Step{PC: u.regs.RIP, Module: mi, Exact: u.exact})
		if mi < 0 {
			return frames, StopNoModule
		}
		if stop, done := u.step(&mods[mi]); done {
			return frames, stop
		}
	}
	return frames, StopMaxFrames
}

func findModule(mods []Module, pc uint64) int {
	for i := range mods {
		if pc >= mods[i].Start && pc < mods[i].End {
			return i
		}
	}
	return -1
}

type unwinder struct {
	regs     Regs
	mem      Memory
	mods     []Module
	exact    bool
	switches int // frame-pointer steps down to another stack so far
}

// MaxStackSwitches is how often a frame-pointer walk may step down to
// another stack (MAX_STACK_SWITCHES in bpf/probee.h, which the bpf
// package's TestSharedConstants compares: Go's g0 stack leads back to the
// goroutine's, below it); a loop still turns down once per turn.
const MaxStackSwitches = 2

// step moves regs to the caller's frame; done reports the end of the walk.
func (u *unwinder) step(m *Module) (StopReason, bool) {
	if len(m.Table.Entries) == 0 {
		return u.fpStep()
	}
	pc := u.regs.RIP - m.Bias
	if !u.exact {
		pc--
	}
	r, ok := m.Table.Lookup(pc)
	if !ok { // code its table does not cover (V8's embedded builtins in node)
		return u.fpStep()
	}
	var cfa uint64
	switch r.CFA {
	case CFARSP:
		cfa = u.regs.RSP + uint64(int64(r.CFAOffset))
	case CFARBP:
		cfa = u.regs.RBP + uint64(int64(r.CFAOffset))
	case CFAPLT:
		cfa = u.regs.RSP + uint64(int64(r.CFAOffset))
		if u.regs.RIP&15 >= uint64(r.PLTThreshold) {
			cfa += 8
		}
	case CFARBX:
		if u.regs.RBX == 0 {
			return StopUnsupported, true
		}
		cfa = u.regs.RBX + uint64(int64(r.CFAOffset))
	case CFAReg: // a stack probe loop's r11, OpenSSL's rax...
		if u.regs.GPR == nil || r.Reg >= 16 {
			return StopUnsupported, true
		}
		cfa = u.regs.GPR[r.Reg] + uint64(int64(r.CFAOffset))
	case CFARSPRetRDI:
		if u.regs.GPR == nil {
			return StopUnsupported, true
		}
		return u.retRDI(u.regs.RSP+uint64(int64(r.CFAOffset)), r)
	case CFASignal:
		return u.signalStep()
	case CFAEndOfStack:
		return StopEndOfStack, true
	default:
		return StopUnsupported, true
	}
	return u.finish(cfa, r)
}

func (u *unwinder) finish(cfa uint64, r Rule) (StopReason, bool) {
	ra, ok := u.mem.Read64(cfa - 8)
	if !ok {
		return StopMemory, true
	}
	if stop, done := u.restore(cfa, r); done {
		return stop, done
	}
	return u.move(ra, cfa)
}

// retRDI moves to the caller of a frame whose return address is in rdi
// (the return address was popped: the CFA may be rsp itself, which move's
// progress check refuses, as the kernel's rule_step allows).
func (u *unwinder) retRDI(cfa uint64, r Rule) (StopReason, bool) {
	ra := u.regs.GPR[RDI]
	if stop, done := u.restore(cfa, r); done {
		return stop, done
	}
	if cfa == u.regs.RSP {
		u.regs.RSP = cfa - 1
	}
	return u.move(ra, cfa)
}

// restore sets the caller's rbp and rbx by r.
func (u *unwinder) restore(cfa uint64, r Rule) (StopReason, bool) {
	var ok bool
	switch r.RBP {
	case RBPOffset:
		if u.regs.RBP, ok = u.mem.Read64(cfa + uint64(int64(r.RBPOffset))); !ok {
			return StopMemory, true
		}
	case RBPUndefined:
		u.regs.RBP = 0
	}
	if r.RBXSlot != 0 {
		if u.regs.RBX, ok = u.mem.Read64(cfa + uint64(8*int64(r.RBXSlot))); !ok {
			return StopMemory, true
		}
	}
	return 0, false
}

func (u *unwinder) move(ra, cfa uint64) (StopReason, bool) {
	if ra == 0 {
		return StopEndOfStack, true
	}
	if cfa <= u.regs.RSP || !userPC(ra) {
		return StopBadFrame, true
	}
	u.regs.RIP, u.regs.RSP, u.exact = ra, cfa, false
	u.regs.GPR = nil // the caller's are not known
	return 0, false
}

// fpStep moves to the caller by the frame pointer, as bpf/unwind.h's
// fp_step: rbp 0 ends the stack; an rbp that is no user address (argc,
// left there by code without frame pointers) ends the walk unread.
func (u *unwinder) fpStep() (StopReason, bool) {
	fp := u.regs.RBP
	if fp == 0 {
		return StopEndOfStack, true
	}
	if !userPC(fp) {
		return StopBadFrame, true
	}
	ra, ok1 := u.mem.Read64(fp + 8)
	next, ok2 := u.mem.Read64(fp)
	if !ok1 || !ok2 {
		return StopMemory, true
	}
	u.regs.RBP = next
	if fp+16 < u.regs.RSP { // another stack, below this one
		if u.switches >= MaxStackSwitches {
			return StopBadFrame, true
		}
		u.switches++
		u.regs.RSP = 0
	}
	return u.move(ra, fp+16)
}

// userPC reports whether v can be a user-space address (canonical, above
// the null page), as bpf/stackstore.h's user_pc.
func userPC(v uint64) bool { return v >= 0x1000 && v < 0x800000000000 }

// signalStep restores the interrupted registers from the sigcontext.
func (u *unwinder) signalStep() (StopReason, bool) {
	sp := u.regs.RSP
	rip, ok1 := u.mem.Read64(sp + SigcontextRIP)
	rsp, ok2 := u.mem.Read64(sp + SigcontextRSP)
	rbp, ok3 := u.mem.Read64(sp + SigcontextRBP)
	if !ok1 || !ok2 || !ok3 {
		return StopMemory, true
	}
	rbx, _ := u.mem.Read64(sp + SigcontextRBX) // 0, unknown, when unreadable
	u.regs = Regs{RIP: rip, RSP: rsp, RBP: rbp, RBX: rbx}
	u.exact = true
	return 0, false
}
