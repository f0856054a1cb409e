// Package x86code decodes x86-64 machine code one instruction at a time,
// for the packages that read functions' code: resolver (the returns of a
// function, for return probes) and unwind (stack heights of code no CFI
// covers). It wraps golang.org/x/arch's x86asm, adding the instructions
// that decoder does not know but compilers emit in ordinary code, and
// never panics, whatever the bytes.
package x86code

import (
	"errors"

	"golang.org/x/arch/x86/x86asm"
)

// ErrUndecodable means an instruction the decoder does not know, or code
// that ends inside an instruction.
var ErrUndecodable = errors.New("an instruction the x86 decoder does not know")

// Instructions x86asm does not decode, by their bytes (CET's endbr64 at
// the start of every function gcc builds with -fcf-protection, AVX's
// vzeroupper in Go's assembly). None changes a general register.
var knownInsns = [][]byte{
	{0xf3, 0x0f, 0x1e, 0xfa}, // endbr64
	{0xf3, 0x0f, 0x1e, 0xfb}, // endbr32
	{0xc5, 0xf8, 0x77},       // vzeroupper
	{0xc5, 0xfc, 0x77},       // vzeroall
}

// Decode decodes the instruction at the start of code in 64-bit mode. The
// instructions of knownInsns come back as a NOP of their length.
func Decode(code []byte) (x86asm.Inst, error) {
	for _, k := range knownInsns {
		if len(code) >= len(k) && string(code[:len(k)]) == string(k) {
			return x86asm.Inst{Op: x86asm.NOP, Len: len(k), Mode: 64}, nil
		}
	}
	in, err := x86asm.Decode(code, 64)
	if err != nil || in.Len <= 0 || in.Op == 0 { // Op 0: a truncated or unknown instruction
		return x86asm.Inst{}, ErrUndecodable
	}
	return in, nil
}

// IsJump reports whether op is JMP or a conditional jump.
func IsJump(op x86asm.Op) bool {
	switch op {
	case x86asm.JMP, x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE,
		x86asm.JECXZ, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO,
		x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ, x86asm.JS,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return true
	}
	return false
}
