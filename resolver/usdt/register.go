package usdt

import "strings"

// RegID is an x86-64 register as the CPU holds it: a general-purpose
// register in its 64-bit form, %rip, or an SSE register.
type RegID uint8

// Registers. NoReg is the zero value: no register (a memory operand
// without base or index).
const (
	NoReg RegID = iota
	RAX
	RBX
	RCX
	RDX
	RSI
	RDI
	RBP
	RSP
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
	RIP
	XMM0 // XMM0 + n is %xmmn, n < 16
)

const numXMM = 16

// Register is a register as an operand names it: which register, how many
// of its low bytes the name covers (%esi: RSI, 4; %sil: RSI, 1; %xmm0: 16),
// and High for %ah, %bh, %ch and %dh, the second byte of their register.
type Register struct {
	ID    RegID
	Bytes uint8
	High  bool
}

// IsZero reports whether r names no register.
func (r Register) IsZero() bool { return r.ID == NoReg }

// String is the register's name without '%': "esi", "r12d", "ah", "xmm1".
func (r Register) String() string { return registerNames[r] }

// MarshalText writes the register's name.
func (r Register) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// registers maps every register name the parser accepts (without '%') to
// what it names.
var registers = buildRegisters()

// registerNames is registers the other way round.
var registerNames = func() map[Register]string {
	m := make(map[Register]string, len(registers))
	for name, r := range registers {
		m[r] = name
	}
	return m
}()

func buildRegisters() map[string]Register {
	m := map[string]Register{"rip": {RIP, 8, false}, "eip": {RIP, 4, false}}
	// The four legacy registers with a/b/c/d names.
	for i, l := range []string{"a", "b", "c", "d"} {
		id := RAX + RegID(i)
		m["r"+l+"x"] = Register{id, 8, false}
		m["e"+l+"x"] = Register{id, 4, false}
		m[l+"x"] = Register{id, 2, false}
		m[l+"l"] = Register{id, 1, false}
		m[l+"h"] = Register{id, 1, true}
	}
	for i, n := range []string{"si", "di", "bp", "sp"} {
		id := RSI + RegID(i)
		m["r"+n] = Register{id, 8, false}
		m["e"+n] = Register{id, 4, false}
		m[n] = Register{id, 2, false}
		m[n+"l"] = Register{id, 1, false}
	}
	for i := 8; i <= 15; i++ {
		id := R8 + RegID(i-8)
		n := "r" + itoa(i)
		m[n] = Register{id, 8, false}
		m[n+"d"] = Register{id, 4, false}
		m[n+"w"] = Register{id, 2, false}
		m[n+"b"] = Register{id, 1, false}
	}
	for i := 0; i < numXMM; i++ {
		m["xmm"+itoa(i)] = Register{XMM0 + RegID(i), 16, false}
	}
	return m
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// register looks a register name up, case-insensitively as gas does.
func register(name string) (Register, bool) {
	r, ok := registers[strings.ToLower(name)]
	return r, ok
}

// String is the 64-bit name of the register: "rsi", "r12", "rip", "xmm1".
func (id RegID) String() string {
	switch {
	case id == NoReg:
		return ""
	case id >= XMM0 && id < XMM0+numXMM:
		return "xmm" + itoa(int(id-XMM0))
	}
	return Register{id, 8, false}.String()
}
