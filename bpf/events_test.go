package bpf

import (
	"encoding/binary"
	"testing"

	"github.com/probee/probee/bpf/wire"
)

// TestDecodeEvent: a struct event record, as the programs write it, decodes
// field by field; a short one is refused.
func TestDecodeEvent(t *testing.T) {
	ne := binary.NativeEndian
	b := make([]byte, 24)
	ne.PutUint32(b[0:], uint32(wire.EventGate))
	ne.PutUint32(b[4:], 100)
	ne.PutUint32(b[8:], 101)
	ne.PutUint32(b[12:], 7)
	ne.PutUint64(b[16:], 1e9)
	want := wire.ProcessEvent{Type: wire.EventGate, TGID: 100, PID: 101, PPID: 7, When: 1e9}
	if got, ok := decodeEvent(b); !ok || got != want {
		t.Errorf("decodeEvent = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := decodeEvent(b[:23]); ok {
		t.Error("decodeEvent took a 23-byte record")
	}
}
