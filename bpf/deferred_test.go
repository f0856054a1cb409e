package bpf

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/probee/probee/unwind"
)

// deferredRecord builds a record as the kernel sends it: npcs pcs (sent
// pcs of them) then a stack copy of len bytes, of which data holds what
// was sent; rbx is 0xbb.
func deferredRecord(npcs, sent, length uint32, data []byte) []byte {
	b := make([]byte, deferredHeader)
	binary.NativeEndian.PutUint32(b[4:], 42) // key.tgid
	copy(b[24:], "comm")
	ne := binary.NativeEndian
	ne.PutUint32(b[40:], 43)   // pid
	ne.PutUint32(b[44:], npcs) // npcs
	ne.PutUint64(b[48:], 0x401000)
	ne.PutUint64(b[56:], 0x7ffd0000)
	ne.PutUint32(b[76:], length)
	ne.PutUint32(b[80:], 7)                 // ppid
	ne.PutUint64(b[88+8*unwind.RBX:], 0xbb) // gpr[rbx]
	ne.PutUint64(b[88+8*11:], 0x11)         // gpr[r11]
	for i := range sent {
		b = ne.AppendUint64(b, uint64(0x500+i))
	}
	return append(b, data...)
}

// Records are decoded field by field; counts past what was sent are cut
// to it, and a record shorter than its header is refused.
func TestDecodeDeferred(t *testing.T) {
	d, ok := decodeDeferred(deferredRecord(2, 2, 3, []byte{1, 2, 3, 4}))
	if !ok || d.TGID != 42 || d.PID != 43 || d.PPID != 7 || d.Comm != "comm" ||
		!slices.Equal(d.PCs, []uint64{0x500, 0x501}) || d.Regs.RIP != 0x401000 || d.Regs.RBX != 0xbb || d.Regs.GPR != nil ||
		d.Stack.Addr != 0x7ffd0000 || !slices.Equal(d.Stack.Data, []byte{1, 2, 3}) {
		t.Errorf("decoded %+v, %v", d, ok)
	}
	// The interrupted frame (no pcs before it) has its registers.
	if d, ok := decodeDeferred(deferredRecord(0, 0, 1, []byte{9})); !ok || d.Regs.GPR == nil || d.Regs.GPR[11] != 0x11 || !slices.Equal(d.Stack.Data, []byte{9}) {
		t.Errorf("first frame: %+v, %v; want its registers (r11 0x11)", d, ok)
	}
	if d, ok := decodeDeferred(deferredRecord(1000, 300, 100, []byte{9})); !ok || len(d.PCs) != MaxUserStack || len(d.Stack.Data) != 100 {
		t.Errorf("oversized counts: %d pcs, %d bytes, %v", len(d.PCs), len(d.Stack.Data), ok)
	}
	if d, ok := decodeDeferred(deferredRecord(10, 3, 100, nil)); !ok || len(d.PCs) != 3 || len(d.Stack.Data) != 0 {
		t.Errorf("pcs cut short: %d pcs, %d bytes, %v; want the 3 sent", len(d.PCs), len(d.Stack.Data), ok)
	}
	if _, ok := decodeDeferred(make([]byte, deferredHeader-1)); ok {
		t.Error("a short record was decoded")
	}
}

func FuzzDecodeDeferred(f *testing.F) {
	f.Add(deferredRecord(2, 2, 3, []byte{1, 2, 3}))
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok := decodeDeferred(b)
		if ok && (len(d.PCs) > MaxUserStack || len(d.Stack.Data) > len(b)) {
			t.Fatalf("decoded more than sent: %d pcs, %d bytes", len(d.PCs), len(d.Stack.Data))
		}
	})
}
