package bpf

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Layout of struct counts_gate (probee.h), taken from its generated Go
// type: active at 0, then one 64-byte slot per CPU (modulo countsSlots)
// holding busy[2] and added[6].
const (
	countsSlots  = len(probeeCountsGate{}.Slots)
	gateSlotsOff = int(unsafe.Offsetof(probeeCountsGate{}.Slots))
	gateSlotSize = int(unsafe.Sizeof(probeeCountsGate{}.Slots[0]))
	gateAddedOff = int(unsafe.Offsetof(probeeCountsGate{}.Slots[0].Added)) // in a slot
	gateSize     = int(unsafe.Sizeof(probeeCountsGate{}))
)

// The maps whose keys the programs count as they add them (enum
// added_kind in probee.h).
const (
	addedCounts  = int(probeeAddedKindADDED_COUNTS)
	addedKstacks = int(probeeAddedKindADDED_KSTACKS)
	addedUstacks = int(probeeAddedKindADDED_USTACKS) // one per depth class, in the order of ustackClasses
	addedKinds   = int(probeeAddedKindADDED_KINDS)
)

// countsGate is user space's side of the counts gate: the map's memory,
// shared with the programs, read and written with atomics. A program marks
// the map it counts in busy, then checks that it is still active; switchTo
// stores the new active map, then waitIdle reads the old map's busy
// counters. Both sides write before they read, with full barriers (Go's
// atomics; lock-prefixed adds in BPF on x86), so a program either sees
// the switch or is seen busy. An arm64 build would need the BPF side's add
// in its fetch form (BPF_FETCH, which that JIT emits fully ordered).
type countsGate struct {
	mem []byte
}

func openCountsGate(m *ebpf.Map) (*countsGate, error) {
	if int(m.ValueSize()) != gateSize {
		return nil, fmt.Errorf("counts gate: value size %d, want %d (probee.h and gate.go disagree)", m.ValueSize(), gateSize)
	}
	page := os.Getpagesize()
	size := (gateSize + page - 1) / page * page
	mem, err := unix.Mmap(m.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the counts gate: %w", err)
	}
	return &countsGate{mem: mem}, nil
}

func (g *countsGate) close() {
	if g != nil && g.mem != nil {
		unix.Munmap(g.mem)
		g.mem = nil
	}
}

func (g *countsGate) word32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&g.mem[off])) }
func (g *countsGate) word64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&g.mem[off])) }

// switchTo makes events count in map m (0 or 1) from now on.
func (g *countsGate) switchTo(m uint32) { atomic.StoreUint32(g.word32(0), m) }

// busy is how many events are counting in map m right now.
func (g *countsGate) busy(m uint32) uint64 {
	var n uint64
	for i := 0; i < countsSlots; i++ {
		n += atomic.LoadUint64(g.word64(gateSlotsOff + i*gateSlotSize + int(m)*8))
	}
	return n
}

// added is how many keys the programs added to maps of kind (addedCounts,
// ...) since the session began.
func (g *countsGate) added(kind int) uint64 {
	var n uint64
	for i := 0; i < countsSlots; i++ {
		n += atomic.LoadUint64(g.word64(gateSlotsOff + i*gateSlotSize + gateAddedOff + kind*8))
	}
	return n
}

// waitIdle polls until no event counts in map m, for at most timeout, and
// reports whether it is idle.
func (g *countsGate) waitIdle(m uint32, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for pause := 5 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		if g.busy(m) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}
