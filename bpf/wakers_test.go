package bpf

import (
	"slices"
	"testing"
)

func comm16(s string) (c [16]int8) {
	for i := range min(len(s), 15) {
		c[i] = int8(s[i])
	}
	return c
}

// A join becomes one kernel stack, which SplitWaker takes apart again:
// the wait's kernel stack, and the waker's tgid, comm and stacks leaf
// first. A join whose stacks are missing keeps what there is.
func TestWakerJoinSplit(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	blocked := []uint64{0xffffffff81000010, 0xffffffff81000020} // leaf first
	wk := []uint64{0xffffffff81000100, 0xffffffff81000200, 0xffffffff81000300}
	wu := []uint64{0x401000, 0x402000}
	s.putKernel(0xb1, uint32(len(blocked)), blocked)
	s.putKernel(0xc1, uint32(len(wk)), wk)
	s.putUser(0xd1, uint32(len(wu)), 0, wu)
	tests := []struct {
		name      string
		j         probeeWakeJoin
		blocked   []uint64
		kern, usr []uint64
	}{
		{"whole", probeeWakeJoin{Blocked: 0xb1, Ustack: 0xd1, Kstack: 0xc1, Tgid: 4242, Comm: comm16("a-long-name-0123")}, blocked, wk, wu},
		{"kernel waker", probeeWakeJoin{Blocked: 0xb1, Kstack: 0xc1, Tgid: 7, Comm: comm16("kworker/0:1")}, blocked, wk, nil},
		{"wait stack lost", probeeWakeJoin{Blocked: 0x99, Ustack: 0xd1, Kstack: 0xc1, Tgid: 1, Comm: comm16("x")}, nil, wk, wu},
	}
	for _, tt := range tests {
		node := s.acc.joinNode(&tt.j)
		pcs := Stack{s.acc.pcs, node}.PCs()
		got, w := SplitWaker(pcs)
		if w == nil {
			t.Errorf("%s: no waker in %x", tt.name, pcs)
			continue
		}
		if !slices.Equal(got, tt.blocked) || !slices.Equal(w.Kernel, tt.kern) || !slices.Equal(w.User, tt.usr) {
			t.Errorf("%s: split into %x, waker kernel %x user %x; want %x, %x, %x", tt.name, got, w.Kernel, w.User, tt.blocked, tt.kern, tt.usr)
		}
		if want := commString(tt.j.Comm); w.TGID != int(tt.j.Tgid) || w.Comm != want {
			t.Errorf("%s: waker %d %q, want %d %q", tt.name, w.TGID, w.Comm, tt.j.Tgid, want)
		}
	}
	if got, w := SplitWaker(blocked); w != nil || !slices.Equal(got, blocked) {
		t.Errorf("a stack without a waker split into %x and %+v", got, w)
	}
}

// putJoins makes each join the kernel stack of its hash, which a count
// naming it resolves to.
func TestWakerJoinResolves(t *testing.T) {
	s := &Session{acc: newAccumulator()}
	s.putKernel(0xb1, 1, []uint64{0xffffffff81000010})
	s.putJoins(map[uint64]probeeWakeJoin{0x5eed: {Blocked: 0xb1, Tgid: 3, Comm: comm16("w")}})
	k := s.acc.keyOf(rawKey{probe: 1, tgid: 9, kstack: 0x5eed})
	pcs, w := SplitWaker(Stack{s.acc.pcs, k.kernel}.PCs())
	if w == nil || w.TGID != 3 || w.Comm != "w" || !slices.Equal(pcs, []uint64{0xffffffff81000010}) {
		t.Errorf("a count naming a join resolved to %x and %+v", pcs, w)
	}
}

// SplitWaker takes any pcs (a count's kernel stack) without panicking.
func FuzzSplitWaker(f *testing.F) {
	f.Add(uint64(wakerCommMark|1), uint64(wakerCommMark), uint64(wakerCommMark), uint64(wakerMark|5), uint64(0xffffffff81000000))
	f.Add(uint64(0), uint64(wakerCommMark), uint64(wakerMark), uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b, c, d, e uint64) {
		pcs := []uint64{a, b, c, d, e}
		for n := range len(pcs) + 1 {
			got, w := SplitWaker(pcs[:n])
			if w == nil && len(got) != n {
				t.Fatalf("no waker, but %d of %d pcs kept", len(got), n)
			}
		}
	})
}
