package unwind

import "testing"

// A CFI row reduces to the rule the BPF unwinder evaluates: a return
// address at CFA-8 under an rsp, rbp, rbx or other general register CFA
// as it is; one kept in rdi (glibc's vfork, between its pop and push
// around the system call) only under an rsp CFA; anything else is
// unsupported.
func TestSetRule(t *testing.T) {
	ra8 := regRule{kind: regOffset, off: -8}
	tests := []struct {
		name string
		st   frameState
		want Rule
	}{
		{"rsp", frameState{cfa: cfaRule{reg: regRSP, off: 16}, ra: ra8},
			Rule{CFA: CFARSP, CFAOffset: 16}},
		{"rbp, rbp saved", frameState{cfa: cfaRule{reg: regRBP, off: 16}, ra: ra8, rbp: regRule{kind: regOffset, off: -16}},
			Rule{CFA: CFARBP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}},
		{"return address in rdi (vfork)", frameState{cfa: cfaRule{reg: regRSP, off: 0}, ra: regRule{kind: regRegister, off: RDI}},
			Rule{CFA: CFARSPRetRDI}},
		{"return address in rdi, rbp CFA", frameState{cfa: cfaRule{reg: regRBP, off: 16}, ra: regRule{kind: regRegister, off: RDI}},
			ruleUnsupported},
		{"return address in rbx", frameState{cfa: cfaRule{reg: regRSP, off: 0}, ra: regRule{kind: regRegister, off: 3}},
			ruleUnsupported},
		{"rbx CFA (ld.so's lazy-binding trampoline)", frameState{cfa: cfaRule{reg: 3, off: 24}, ra: ra8,
			rbx: regRule{kind: regOffset, off: -24}}, Rule{CFA: CFARBX, CFAOffset: 24, RBXSlot: -3}},
		{"rbx saved", frameState{cfa: cfaRule{reg: regRSP, off: 32}, ra: ra8, rbx: regRule{kind: regOffset, off: -32}},
			Rule{CFA: CFARSP, CFAOffset: 32, RBXSlot: -4}},
		{"rbx saved off a word", frameState{cfa: cfaRule{reg: regRSP, off: 32}, ra: ra8, rbx: regRule{kind: regOffset, off: -20}},
			Rule{CFA: CFARSP, CFAOffset: 32}},
		{"rbx saved too far", frameState{cfa: cfaRule{reg: regRSP, off: 4096}, ra: ra8, rbx: regRule{kind: regOffset, off: -2048}},
			Rule{CFA: CFARSP, CFAOffset: 4096}},
		{"rbx in another register", frameState{cfa: cfaRule{reg: regRSP, off: 32}, ra: ra8, rbx: regRule{kind: regRegister, off: 12}},
			Rule{CFA: CFARSP, CFAOffset: 32}},
		{"r11 CFA (a stack probe loop)", frameState{cfa: cfaRule{reg: 11, off: 1048592}, ra: ra8},
			Rule{CFA: CFAReg, Reg: 11, CFAOffset: 1048592}},
		{"CFA in no general register", frameState{cfa: cfaRule{reg: 16, off: 8}, ra: ra8}, ruleUnsupported},
		{"return address undefined", frameState{cfa: cfaRule{reg: regRSP, off: 8}, ra: regRule{kind: regUndef}},
			ruleEnd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Rule
			setRule(&r, &tt.st, false)
			if r != tt.want {
				t.Errorf("rule %v (%+v), want %v (%+v)", r, r, tt.want, tt.want)
			}
		})
	}
}
