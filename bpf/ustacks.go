package bpf

import (
	"github.com/cilium/ebpf"
)

// User stacks are kept in three hash maps by depth, each holding that many
// pcs per element (enum ustack_class in probee.h): the kernel allocates
// (zeroed) and copies a whole element when a program stores a new stack,
// and with one map of 256-pc elements every new stack took a 4 KiB
// allocation. A hit on a new stack cost the traced task 3.2 µs with
// `--unwind fp`, now 2.0 µs (bpftrace's @[ustack] 1.7 µs;
// tests/bench/12-new-stacks.sh). A stored stack's key is its hash with the
// class (enum ustack_class: its index here plus one) in the low two bits,
// so that the keys of the three maps never meet in the accumulator, which
// holds the stacks of all three by key.
type ustackClass struct {
	name     string // the map in the spec
	pcs      int    // pcs an element holds
	prealloc int    // divides --max-stacks where maps are preallocated
}

// ustackClasses are the depth classes, shortest first (the order of the
// programs' added counters).
var ustackClasses = [...]ustackClass{
	{name: "ustacks_short", pcs: int(probeeLimitUSTACK_SHORT_PCS), prealloc: 1},
	{name: "ustacks_mid", pcs: int(probeeLimitUSTACK_MID_PCS), prealloc: 2},
	{name: "ustacks", pcs: MaxUserStack, prealloc: 4},
}

// ustackMaps are the session's user stack maps in ustackClasses' order.
func (o *probeeMaps) ustackMaps() [len(ustackClasses)]*ebpf.Map {
	return [...]*ebpf.Map{o.UstacksShort, o.UstacksMid, o.Ustacks}
}

// sizeUstacks sizes the user stack maps: n stacks of each depth class (0:
// the spec's), fewer of the deeper ones where maps are preallocated, whose
// memory is all taken when the session opens.
func sizeUstacks(spec *ebpf.CollectionSpec, n int, prealloc bool) {
	for _, c := range ustackClasses {
		m := spec.Maps[c.name]
		k := n
		if k == 0 {
			k = int(m.MaxEntries)
		}
		if prealloc {
			k /= c.prealloc
		}
		m.MaxEntries = uint32(max(k, 1))
	}
}
