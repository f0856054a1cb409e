package bpf

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/unwind"
)

// deferredHeader is the record up to its pcs and stack copy.
var deferredHeader = int(unsafe.Offsetof(probeeDeferredStack{}.Tail))

// Deferred reads the deferred stacks and calls handle for each, from one
// goroutine, until stop is called. stop hands over the records still
// queued, then waits for the reader goroutine to finish.
func (s *Session) Deferred(handle func(wire.DeferredStack)) (stop func(), err error) {
	return readRing(s.objs.Deferred, "deferred stack", func(b []byte) {
		if d, ok := decodeDeferred(b); ok {
			handle(d)
		}
	})
}

// decodeDeferred decodes one record (defer.h: the header, npcs pcs, len
// bytes of stack); false when it is malformed.
func decodeDeferred(b []byte) (wire.DeferredStack, bool) {
	var h probeeDeferredStack
	if len(b) < deferredHeader {
		return wire.DeferredStack{}, false
	}
	hdr := unsafe.Slice((*byte)(unsafe.Pointer(&h)), deferredHeader)
	copy(hdr, b)
	tail := b[deferredHeader:]
	n := min(int(h.Npcs), MaxUserStack, len(tail)/8)
	pcs := make([]uint64, n)
	for i := range pcs {
		pcs[i] = binary.NativeEndian.Uint64(tail[8*i:])
	}
	data := tail[8*n:]
	if int(h.Len) < len(data) {
		data = data[:h.Len]
	}
	regs := unwind.Regs{RIP: h.Ip, RSP: h.Sp, RBP: h.Bp, RBX: h.Gpr[unwind.RBX]}
	if n == 0 { // ip is the interrupted frame: its registers are known
		gpr := h.Gpr
		regs.GPR = &gpr
	}
	return wire.DeferredStack{
		Probe: h.Key.Probe, TGID: int(h.Key.Tgid), PID: int(h.Pid), PPID: int(h.Ppid), Comm: commString(h.Key.Comm),
		KStack: h.Key.Kstack, PCs: pcs, Regs: regs, Exact: h.Exact != 0,
		Stack: unwind.StackCopy{Addr: h.Sp, Data: slices.Clone(data)},
	}, true
}

// AddStack counts the event of d with its finished user stack (leaf first).
func (s *Session) AddStack(d wire.DeferredStack, user []uint64, truncated bool) {
	var comm [16]int8
	for i := 0; i < len(comm)-1 && i < len(d.Comm); i++ {
		comm[i] = int8(d.Comm[i])
	}
	s.dmu.Lock()
	defer s.dmu.Unlock()
	k := countKey{probe: d.Probe, tgid: uint32(d.TGID), comm: s.acc.commID(comm), user: s.acc.pcs.AddReversed(user)}
	if truncated {
		k.flags = stackTruncated
	}
	s.copyKernel(d.KStack)
	if ks, ok := s.acc.kstacks[d.KStack]; ok && d.KStack != 0 {
		k.kernel = ks.node
	}
	s.acc.addCount(k, 1)
}
