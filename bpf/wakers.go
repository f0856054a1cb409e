package bpf

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/probee/probee/internal/prefixtree"
)

// --wakers (offcpu.h): the sched_waking program joins the waker's stacks
// to the wait it ends, under a hash of the join that takes the place of
// the wait's kernel stack hash (wake_joins). Each take moves the joins
// first, then the stacks: a join is written after the stacks it names, so
// they come in the same take or an earlier one, and each join becomes a
// kernel stack of its own at once (joinNode), kept by its hash like any
// other. That stack holds the wait's kernel stack, then a mark naming the
// waker (wakerMarks), then the waker's kernel and user stacks from the
// wake-up to their roots: SplitWaker takes it apart again.

// Waker is who ended an off-CPU wait: the thread that woke it, with its
// stacks from the wake-up to their roots.
type Waker struct {
	TGID   int
	Comm   string
	Kernel []uint64 // leaf (the wake-up) first
	User   []uint64 // leaf first; empty for a kernel thread or a waker outside the traced processes
}

// The marks between a wait's kernel stack and its waker's: non-canonical
// addresses (bits 63..48 neither all 0 nor all 1), which no pc is. The
// first carries the tgid, the next wakerCommMarks 6 bytes of comm each.
const (
	wakerMark      = uint64(0x8000) << 48
	wakerCommMark  = uint64(0x8001) << 48
	wakerCommMarks = 3
	markMask       = uint64(0xffff) << 48
)

// DefaultWakeJoins sizes wake_joins: the wake-ups between two takes.
const DefaultWakeJoins = 16384

// configureWakers sizes wake_joins for --wakers.
func configureWakers(spec *ebpf.CollectionSpec, o OffCPU) {
	if o.On && o.Wakers {
		spec.Maps["wake_joins"].MaxEntries = DefaultWakeJoins
	}
}

// attachWakers attaches the sched_waking program.
func (s *Session) attachWakers() error {
	l, err := s.attachTracing("probee_waker")
	if err != nil {
		return fmt.Errorf("attach sched_waking for --wakers (tp_btf): %w", err)
	}
	s.addLink(l)
	return nil
}

// takeJoins moves the joins of wake_joins out of the kernel, before the
// stacks they name (takeStacks).
func (s *Session) takeJoins() (map[uint64]probeeWakeJoin, error) {
	if !s.opts.OffCPU.Wakers {
		return nil, nil
	}
	joins := map[uint64]probeeWakeJoin{}
	err := takeAll(s.objs.WakeJoins, func(k uint64, v *probeeWakeJoin) { joins[k] = *v })
	return joins, err
}

// putJoins adds each join as the kernel stack of its hash, once the
// stacks it names are in.
func (s *Session) putJoins(joins map[uint64]probeeWakeJoin) {
	for h, j := range joins {
		s.acc.kstacks[h] = kernelStack{node: s.acc.joinNode(&j), take: s.acc.take, at: s.acc.takeAt}
	}
}

// joinNode is the stack of join j, root first: the wait's kernel stack,
// the waker's marks, its kernel stack and its user stack leaf first.
// Stacks missing (lost, or a kernel thread's user stack) are left out.
func (a *accumulator) joinNode(j *probeeWakeJoin) prefixtree.Node {
	var path []uint64
	if k, ok := a.kstacks[j.Blocked]; ok && j.Blocked != 0 {
		path = a.pcs.Append(path, k.node)
	}
	path = append(path, wakerMarks(j.Tgid, j.Comm)...)
	if k, ok := a.kstacks[j.Kstack]; ok && j.Kstack != 0 {
		path = a.pcs.AppendReversed(path, k.node)
	}
	if u, ok := a.ustacks[j.Ustack]; ok && j.Ustack != 0 {
		path = a.pcs.AppendReversed(path, u.node)
	}
	return a.pcs.Add(path)
}

// wakerMarks are the marks of a waker.
func wakerMarks(tgid uint32, comm [16]int8) []uint64 {
	var b [wakerCommMarks * 6]byte
	for i, c := range comm {
		b[i] = byte(c)
	}
	out := []uint64{wakerMark | uint64(tgid)}
	for i := range wakerCommMarks {
		var w [8]byte
		copy(w[:6], b[6*i:])
		out = append(out, wakerCommMark|binary.LittleEndian.Uint64(w[:]))
	}
	return out
}

// SplitWaker takes a count's kernel stack pcs, leaf first, apart into the
// wait's kernel stack (a sub-slice of pcs) and the waker that ended it
// (nil: none, or not --wakers).
func SplitWaker(pcs []uint64) ([]uint64, *Waker) {
	i := slices.IndexFunc(pcs, func(pc uint64) bool { return pc&markMask == wakerCommMark })
	n := i + wakerCommMarks
	if i < 0 || n >= len(pcs) || pcs[n]&markMask != wakerMark {
		return pcs, nil
	}
	w := &Waker{TGID: int(uint32(pcs[n]))}
	var comm []byte
	for _, m := range slices.Backward(pcs[i:n]) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], m)
		comm = append(comm, b[:6]...)
	}
	w.Comm = commString(commOf(comm))
	// pcs[:i] is the waker's user stack then its kernel stack, each root
	// first.
	for _, pc := range slices.Backward(pcs[:i]) {
		if kernelPC(pc) {
			w.Kernel = append(w.Kernel, pc)
		} else {
			w.User = append(w.User, pc)
		}
	}
	return pcs[n+1:], w
}

// kernelPC reports whether pc is a kernel address (x86-64: the upper
// half).
func kernelPC(pc uint64) bool { return pc >= 0xffff800000000000 }

func commOf(b []byte) (c [16]int8) {
	for i := range min(len(b), len(c)) {
		c[i] = int8(b[i])
	}
	return c
}
