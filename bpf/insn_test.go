package bpf

import "testing"

func TestRefusedInsn(t *testing.T) {
	cases := []struct {
		bytes  []byte
		refuse bool
	}{
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa}, false},       // endbr64
		{[]byte{0x55, 0x48, 0x89, 0xe5}, false},       // push rbp
		{[]byte{0xf0, 0x0f, 0xba, 0xaf}, true},        // lock bts
		{[]byte{0xc5, 0xf9, 0x6e, 0xc6}, true},        // vmovd
		{[]byte{0xc4, 0x41, 0x01, 0xef}, true},        // vpxor
		{[]byte{0x62, 0xf1, 0x7d, 0x48}, true},        // EVEX: accepted, broken
		{[]byte{0x66, 0xf0, 0x0f, 0xb1}, true},        // 66 lock cmpxchg
		{[]byte{0x3e, 0xff, 0xe0}, true},              // notrack jmp rax
		{[]byte{0x66, 0x66, 0x2e, 0x0f, 0x1f}, true},  // cs nopw
		{[]byte{0x66, 0x0f, 0x1f, 0x44, 0x00}, false}, // nopw
		{nil, false},
	}
	for _, c := range cases {
		if got := refusedInsn(c.bytes) != ""; got != c.refuse {
			t.Errorf("refusedInsn(% x) = %v, want %v", c.bytes, got, c.refuse)
		}
	}
}
