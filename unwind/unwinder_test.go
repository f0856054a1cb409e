package unwind

import (
	"encoding/binary"
	"slices"
	"testing"
)

// tableOf builds a table from (pc, rule) pairs; the last pc ends the function.
func tableOf(t *testing.T, pcs []uint64, rules []Rule) *Table {
	t.Helper()
	b := newBuilder(pcs[0], nil)
	for i, pc := range pcs {
		r := Rule{}
		if i < len(rules) {
			r = rules[i]
		}
		if err := b.add(pc, r); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := b.finish()
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// stack is a fake stack at 0x7000 with words written by address.
type fakeStack map[uint64]uint64

func (s fakeStack) Read64(a uint64) (uint64, bool) { v, ok := s[a]; return v, ok }

func TestUnwindSynthetic(t *testing.T) {
	// Module A at bias 0x1000_0000: f [0x1000,0x1100) CFA=rsp+16; plt [0x2000,0x2010) plt rule;
	// sig [0x3000,0x3010) signal; start [0x4000,0x4010) end of stack.
	tab := tableOf(t,
		[]uint64{0x1000, 0x1100, 0x2000, 0x2010, 0x3000, 0x3010, 0x4000, 0x4010},
		[]Rule{{CFA: CFARSP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}, {}, {CFA: CFAPLT, CFAOffset: 8, PLTThreshold: 11}, {}, ruleSignal, {}, ruleEnd})
	nofp := &Table{Pages: []uint32{0}}
	const bias = 0x10000000
	mods := []Module{{Start: bias, End: bias + 0x10000, Bias: bias, Table: tab}, {Start: 0x50000000, End: 0x50001000, Table: nofp}}
	mem := fakeStack{
		0x7008: bias + 0x200b, // f's return address: into the plt stub at offset 11 (>= threshold)
		0x7000: 0xbbbb,        // f saved rbp at CFA-16
		// plt frame: rsp = 0x7010, rip&15 = 11 -> CFA = 0x7010+8+8 = 0x7020; RA at 0x7018
		0x7018: bias + 0x3005, // into the signal trampoline
		// signal frame at rsp=0x7020
		0x7020 + SigcontextRIP: 0x50000100, // interrupted pc in the no-CFI module
		0x7020 + SigcontextRSP: 0x7400,
		0x7020 + SigcontextRBP: 0x7500,
		// frame-pointer frame: [rbp] = next rbp, [rbp+8] = RA
		0x7500: 0x7600,
		0x7508: bias + 0x4004, // into _start-like end of stack
	}
	frames, stop := Unwind(Regs{RIP: bias + 0x1050, RSP: 0x7000, RBP: 1}, mem, mods, 16)
	want := []Step{
		{PC: bias + 0x1050, Module: 0, Exact: true},
		{PC: bias + 0x200b, Module: 0},
		{PC: bias + 0x3005, Module: 0},
		{PC: 0x50000100, Module: 1, Exact: true},
		{PC: bias + 0x4004, Module: 0},
	}
	if stop != StopEndOfStack || len(frames) != len(want) {
		t.Fatalf("stop %v, frames %+v", stop, frames)
	}
	for i := range want {
		if frames[i] != want[i] {
			t.Errorf("frame %d = %+v, want %+v", i, frames[i], want[i])
		}
	}
}

func TestUnwindStops(t *testing.T) {
	tab := tableOf(t, []uint64{0x1000, 0x1100, 0x1200, 0x1300}, []Rule{{CFA: CFARSP, CFAOffset: 8}, {}, ruleUnsupported})
	mods := []Module{{Start: 0x1000, End: 0x2000, Table: tab}}
	buf := make([]byte, 64)
	binary.LittleEndian.PutUint64(buf[0:], 0x1150) // RA into the gap
	tests := []struct {
		name string
		regs Regs
		want StopReason
	}{
		{"no module", Regs{RIP: 0x9000}, StopNoModule},
		{"gap between functions, rbp argc", Regs{RIP: 0x1010, RSP: 0x8000, RBP: 2}, StopBadFrame},
		{"unsupported", Regs{RIP: 0x1250, RSP: 0x8000}, StopUnsupported},
		{"memory", Regs{RIP: 0x1010, RSP: 0x100}, StopMemory},
	}
	for _, tt := range tests {
		_, stop := Unwind(tt.regs, StackCopy{Addr: 0x8000, Data: buf}, mods, 8)
		if stop != tt.want {
			t.Errorf("%s: stop = %v, want %v", tt.name, stop, tt.want)
		}
	}
}

// A pc its module's table does not cover (a gap between FDEs; V8's
// builtins in node) takes a frame-pointer step, and the walk resumes by
// the table in the caller, as in the kernel. A saved rbp below the frame
// is another stack: stepped down to twice, then the walk is cut.
func TestUnwindNoRuleByFramePointers(t *testing.T) {
	tab := tableOf(t, []uint64{0x1000, 0x1100, 0x1200}, []Rule{{CFA: CFARSP, CFAOffset: 8}})
	mods := []Module{{Start: 0x1000, End: 0x2000, Table: tab}}
	mem := fakeStack{
		0x8000: 0x1150, // f's return address: into the gap
		0x8020: 0,      // the gap's frame: saved rbp, return address into f
		0x8028: 0x1050,
		0x8030: 0, // f's caller: none (end of stack)
	}
	frames, stop := Unwind(Regs{RIP: 0x1010, RSP: 0x8000, RBP: 0x8020}, mem, mods, 8)
	if stop != StopEndOfStack || len(frames) != 3 || frames[1].PC != 0x1150 || frames[2].PC != 0x1050 {
		t.Errorf("through a gap: stop %v, frames %+v; want 0x1010, 0x1150, 0x1050 to the end", stop, frames)
	}
	// Frames in a module without a table whose rbp chain goes down: two
	// switches are followed, the third is cut.
	fp := []Module{{Start: 0x5000, End: 0x6000, Table: &Table{}}}
	down := fakeStack{0x9000: 0x8800, 0x9008: 0x5001, 0x8800: 0x8400, 0x8808: 0x5002, 0x8400: 0x8000, 0x8408: 0x5003}
	frames, stop = Unwind(Regs{RIP: 0x5000, RSP: 0x9100, RBP: 0x9000}, down, fp, 8)
	if stop != StopBadFrame || len(frames) != 3 {
		t.Errorf("down the stack: stop %v, frames %+v; want 3 frames, then bad frame", stop, frames)
	}
}

// A CFAReg or CFARSPRetRDI rule is followed where the frame's registers
// are known (the interrupted frame, Regs.GPR) and stops the walk
// elsewhere, as in the kernel: a stack probe loop keeps its CFA in r11,
// a function that popped its return address into rdi jumps back by it.
func TestUnwindFirstFrameRegisters(t *testing.T) {
	// loop [0x1000,0x1010) CFA=r11+0x20; ret [0x1010,0x1020) CFA=rsp+0,
	// return address in rdi; f [0x1020,0x1100) CFA=rsp+8; start: end.
	tab := tableOf(t, []uint64{0x1000, 0x1010, 0x1020, 0x1100, 0x1200, 0x1210},
		[]Rule{{CFA: CFAReg, Reg: 11, CFAOffset: 0x20}, {CFA: CFARSPRetRDI}, {CFA: CFARSP, CFAOffset: 8}, {}, ruleEnd})
	mods := []Module{{Start: 0x1000, End: 0x2000, Table: tab}}
	mem := fakeStack{0x8018: 0x1205, 0x8ff8: 0x1205}
	var gpr [16]uint64
	gpr[11], gpr[RDI] = 0x8000, 0x1050
	tests := []struct {
		name string
		regs Regs
		want []uint64
		stop StopReason
	}{
		{"CFA in r11", Regs{RIP: 0x1004, RSP: 0x7000, GPR: &gpr}, []uint64{0x1004, 0x1205}, StopEndOfStack},
		{"CFA in r11, registers unknown", Regs{RIP: 0x1004, RSP: 0x7000}, []uint64{0x1004}, StopUnsupported},
		// rsp 0x8ff8 is the CFA: f (CFA 0x9000) returns to 0x1205.
		{"return address in rdi", Regs{RIP: 0x1014, RSP: 0x8ff8, GPR: &gpr}, []uint64{0x1014, 0x1050, 0x1205}, StopEndOfStack},
		{"return address in rdi, registers unknown", Regs{RIP: 0x1014, RSP: 0x8ff8}, []uint64{0x1014}, StopUnsupported},
	}
	for _, tt := range tests {
		frames, stop := Unwind(tt.regs, mem, mods, 8)
		var pcs []uint64
		for _, f := range frames {
			pcs = append(pcs, f.PC)
		}
		if stop != tt.stop || !slices.Equal(pcs, tt.want) {
			t.Errorf("%s: %#x, %v; want %#x, %v", tt.name, pcs, stop, tt.want, tt.stop)
		}
	}
}
