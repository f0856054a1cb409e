package bpf

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/probee/probee/bpf/wire"
)

// Events reads process notices and calls handle for each, from one goroutine,
// until stop is called. stop handles the notices still queued, then waits for
// the reader goroutine to finish.
func (s *Session) Events(handle func(wire.ProcessEvent)) (stop func(), err error) {
	return readRing(s.objs.Events, "event", func(b []byte) {
		if e, ok := decodeEvent(b); ok {
			handle(e)
		}
	})
}

// decodeEvent decodes one struct event (probee.h) through its generated
// type; false when b is short.
func decodeEvent(b []byte) (wire.ProcessEvent, bool) {
	var e probeeEvent
	if len(b) < int(unsafe.Sizeof(e)) {
		return wire.ProcessEvent{}, false
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e)), b)
	return wire.ProcessEvent{Type: wire.EventType(e.Type), TGID: int(e.Tgid), PID: int(e.Pid), PPID: int(e.Ppid), When: e.When}, true
}

// readRing reads the records of ring buffer m and calls handle with each,
// from one goroutine, until stop is called. stop hands over the records
// still queued, then waits for the goroutine to finish. what names the
// ring in errors.
func readRing(m *ebpf.Map, what string, handle func([]byte)) (stop func(), err error) {
	rd, err := ringbuf.NewReader(m)
	if err != nil {
		return nil, fmt.Errorf("open %s ring buffer: %w", what, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			rec, err := rd.Read()
			if errors.Is(err, ringbuf.ErrClosed) || errors.Is(err, ringbuf.ErrFlushed) {
				return
			}
			if err == nil {
				handle(rec.RawSample)
			}
		}
	}()
	return func() {
		rd.Flush() // Read returns what is queued, then ErrFlushed
		<-done
		rd.Close()
	}, nil
}
