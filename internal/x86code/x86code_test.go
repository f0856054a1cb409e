package x86code

import (
	"encoding/hex"
	"errors"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		code string
		op   x86asm.Op
		n    int
	}{
		{"f30f1efa", x86asm.NOP, 4}, // endbr64, which x86asm does not know
		{"c5f877", x86asm.NOP, 3},   // vzeroupper
		{"c3", x86asm.RET, 1},
		{"4883ec18", x86asm.SUB, 4},
		{"eb02", x86asm.JMP, 2},
		{"48", 0, 0},                    // a prefix with nothing after it
		{"c5fd7fc1", x86asm.VMOVDQA, 4}, // VEX (AVX2) is decoded
		{"62f1fd48fec1", 0, 0},          // EVEX (AVX-512) is not
	} {
		b, _ := hex.DecodeString(c.code)
		in, err := Decode(b)
		if c.n == 0 {
			if !errors.Is(err, ErrUndecodable) {
				t.Errorf("%s: %v %v, want ErrUndecodable", c.code, in, err)
			}
			continue
		}
		if err != nil || in.Op != c.op || in.Len != c.n {
			t.Errorf("%s: %v (len %d) %v, want %v len %d", c.code, in.Op, in.Len, err, c.op, c.n)
		}
	}
	if !IsJump(x86asm.JNE) || IsJump(x86asm.CALL) {
		t.Error("IsJump: JNE is a jump, CALL is not")
	}
}

// Decode never panics, whatever the bytes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xf3, 0x0f, 0x1e, 0xfa})
	f.Add([]byte{0xc5, 0xfd, 0x7f, 0xc1})
	f.Add([]byte{0x62, 0xf1, 0xfd, 0x48, 0xfe, 0xc1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if in, err := Decode(b); err == nil && (in.Len <= 0 || in.Len > len(b)) {
			t.Fatalf("length %d of %d bytes", in.Len, len(b))
		}
	})
}
