package usdt

import (
	"encoding/json"
	"strings"
	"testing"
)

func reg(name string) Register { r, _ := register(name); return r }

func TestParseArg(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Arg
	}{
		{"-4@%esi", Arg{Size: 4, Signed: true, Operand: Operand{Kind: OpRegister, Reg: Register{RSI, 4, false}}}},
		{"8@%rbx", Arg{Size: 8, Operand: Operand{Kind: OpRegister, Reg: Register{RBX, 8, false}}}},
		{"1@%dil", Arg{Size: 1, Operand: Operand{Kind: OpRegister, Reg: Register{RDI, 1, false}}}},
		{"1@%ah", Arg{Size: 1, Operand: Operand{Kind: OpRegister, Reg: Register{RAX, 1, true}}}},
		{"-2@%r12w", Arg{Size: 2, Signed: true, Operand: Operand{Kind: OpRegister, Reg: Register{R12, 2, false}}}},
		{"8f@%xmm1", Arg{Size: 8, Float: true, Operand: Operand{Kind: OpRegister, Reg: Register{XMM0 + 1, 16, false}}}},
		{"8f@%rax", Arg{Size: 8, Float: true, Operand: Operand{Kind: OpRegister, Reg: Register{RAX, 8, false}}}},
		{"8@-8(%rbp)", Arg{Size: 8, Operand: Operand{Kind: OpMemory, Reg: Register{RBP, 8, false}, Disp: -8}}},
		{"-4@112(%rsp)", Arg{Size: 4, Signed: true, Operand: Operand{Kind: OpMemory, Reg: Register{RSP, 8, false}, Disp: 112}}},
		{"8@(%rdi)", Arg{Size: 8, Operand: Operand{Kind: OpMemory, Reg: Register{RDI, 8, false}}}},
		{"8@8(%rax,%rcx,8)", Arg{Size: 8, Operand: Operand{Kind: OpMemory, Reg: Register{RAX, 8, false}, Index: Register{RCX, 8, false}, Scale: 8, Disp: 8}}},
		{"4@(,%r9,4)", Arg{Size: 4, Operand: Operand{Kind: OpMemory, Index: Register{R9, 8, false}, Scale: 4}}},
		{"4@(%rax,%rbx)", Arg{Size: 4, Operand: Operand{Kind: OpMemory, Reg: Register{RAX, 8, false}, Index: Register{RBX, 8, false}, Scale: 1}}},
		{"-8@fx_config(%rip)", Arg{Size: 8, Signed: true, Operand: Operand{Kind: OpMemory, Reg: Register{RIP, 8, false}, Symbol: "fx_config"}}},
		{"8@_ZL4tabl.1+16(%rip)", Arg{Size: 8, Operand: Operand{Kind: OpMemory, Reg: Register{RIP, 8, false}, Symbol: "_ZL4tabl.1", Disp: 16}}},
		{"8@sym-0x10(%rip)", Arg{Size: 8, Operand: Operand{Kind: OpMemory, Reg: Register{RIP, 8, false}, Symbol: "sym", Disp: -16}}},
		{"4@0x1234", Arg{Size: 4, Operand: Operand{Kind: OpMemory, Disp: 0x1234}}},
		{"-4@$42", Arg{Size: 4, Signed: true, Operand: Operand{Kind: OpConstant, Disp: 42}}},
		{"-4@$-1", Arg{Size: 4, Signed: true, Operand: Operand{Kind: OpConstant, Disp: -1}}},
		{"8@$18446744073709551615", Arg{Size: 8, Operand: Operand{Kind: OpConstant, Disp: -1}}},
		{"8@$table", Arg{Size: 8, Operand: Operand{Kind: OpConstant, Symbol: "table"}}},
		{"16f@%xmm15", Arg{Size: 16, Float: true, Operand: Operand{Kind: OpRegister, Reg: Register{XMM0 + 15, 16, false}}}},
		{"4@%EAX", Arg{Size: 4, Operand: Operand{Kind: OpRegister, Reg: Register{RAX, 4, false}}}},
	} {
		got, err := ParseArg(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseArg(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if back, err := ParseArg(got.String()); err != nil || back != got {
			t.Errorf("%q: String() = %q parses to %+v, %v", c.in, got.String(), back, err)
		}
	}
}

func TestParseArgErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"%esi", "no '@'"},
		{"3@%esi", `invalid size "3"`},
		{"@%esi", `invalid size ""`},
		{"x@%esi", `invalid size "x"`},
		{"4@", "missing operand"},
		{"4@%zz", "unknown register %zz"},
		{"4@%fs:8", "segment-relative"},
		{"4@$", "missing value"},
		{"4@$1x", `invalid number "1x"`},
		{"4@8(%rax", "unbalanced parentheses"},
		{"4@8(%rax))", "unbalanced parentheses"},
		{"4@()", "want (BASE)"},
		{"4@(%rax,%rbx,3)", `invalid scale "3"`},
		{"4@(%rax,%rbx,4,1)", "want (BASE)"},
		{"4@(%ax)", "%ax cannot address memory"},
		{"4@(%rax,%rip)", "%rip cannot address memory"},
		{"4@(%xmm0)", "%xmm0 cannot address memory"},
		{"4@(rax)", `invalid address register "rax"`},
		{"4@(%rax,)", `invalid address register ""`},
		{"4@1sym(%rip)", `invalid number "1sym"`},
		{"4@sy#m(%rip)", `invalid symbol "sy#m"`},
		{"4@sym+(%rip)", `invalid number ""`},
		{"4@sym--1(%rip)", `invalid number "--1"`},
		{"4@99999999999999999999", "invalid number"},
	} {
		_, err := ParseArg(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseArg(%q) = %v, want an error with %q", c.in, err, c.msg)
		}
	}
}

func TestParseArgs(t *testing.T) {
	args, err := ParseArgs("8@%r14 8@%rax -4@%ebp")
	if err != nil || len(args) != 3 || args[2].String() != "-4@%ebp" {
		t.Errorf("ParseArgs = %v, %v", args, err)
	}
	if args, err := ParseArgs(""); err != nil || args != nil {
		t.Errorf("ParseArgs(\"\") = %v, %v; want none", args, err)
	}
	if _, err := ParseArgs("8@%rax 8@%nope"); err == nil || !strings.Contains(err.Error(), `argument "8@%nope"`) {
		t.Errorf("error %v does not name the argument", err)
	}
}

// Every register name maps to one Register and back.
func TestRegisterNames(t *testing.T) {
	if len(registers) != len(registerNames) {
		t.Fatalf("%d names for %d registers: two names mean the same", len(registers), len(registerNames))
	}
	for name, r := range registers {
		if r.String() != name {
			t.Errorf("%s: String() = %q", name, r.String())
		}
	}
	for id, want := range map[RegID]string{RAX: "rax", RSI: "rsi", R12: "r12", RIP: "rip", XMM0 + 3: "xmm3", NoReg: ""} {
		if id.String() != want {
			t.Errorf("RegID %d = %q, want %q", id, id.String(), want)
		}
	}
}

func TestArgJSON(t *testing.T) {
	for in, want := range map[string]string{
		"-4@%esi":           `{"size":4,"signed":true,"operand":{"kind":"register","reg":"esi"}}`,
		"8@-8(%rbp,%rax,2)": `{"size":8,"operand":{"base":"rbp","disp":-8,"index":"rax","kind":"memory","scale":2}}`,
		"8@sym+8(%rip)":     `{"size":8,"operand":{"base":"rip","disp":8,"kind":"memory","symbol":"sym"}}`,
		"-4@$42":            `{"size":4,"signed":true,"operand":{"disp":42,"kind":"constant"}}`,
	} {
		a, err := ParseArg(in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(a)
		if string(b) != want {
			t.Errorf("%s: %s, want %s", in, b, want)
		}
	}
}
