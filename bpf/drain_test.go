package bpf

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// benchSession is a session whose drained counts are n per-process
// stacks over 5000 processes: a system-wide run's end.
func benchSession(n int) *Session {
	r := rand.New(rand.NewPCG(1, 2))
	comms := [][16]int8{{'l', 's'}, {'g', 'i', 't'}, {'s', 'h'}}
	s := &Session{acc: newAccumulator()}
	for range n {
		pcs := make([]uint64, 8+r.IntN(8))
		for j := range pcs {
			pcs[j] = 0x7f0000000000 + uint64(r.IntN(1<<20))
		}
		k := countKey{tgid: uint32(r.IntN(5000)), comm: s.acc.commID(comms[r.IntN(len(comms))]),
			user: s.acc.pcs.AddReversed(pcs)}
		s.acc.counts[k] = uint64(1 + r.IntN(3))
	}
	return s
}

// BenchmarkAccCounts is the sort of a run's counts at its end (~1M in a
// 12 s system-wide run: tests/bench/67-system-wide-finish.sh).
func BenchmarkAccCounts(b *testing.B) {
	s := benchSession(1 << 20)
	for b.Loop() {
		s.accCounts()
	}
}

func TestAccCountsOrder(t *testing.T) {
	s := benchSession(5000)
	got := s.accCounts()
	if len(got) != 5000 {
		t.Fatalf("%d counts, want 5000", len(got))
	}
	// By probe, process, count (highest first), comm: the order the
	// outputs and reports rely on for ties they do not break themselves.
	if !slices.IsSortedFunc(got, func(a, b Count) int {
		if a.TGID != b.TGID {
			return a.TGID - b.TGID
		}
		if a.Count != b.Count {
			return int(b.Count) - int(a.Count)
		}
		return 0
	}) {
		t.Fatal("counts not sorted by process, then count")
	}
	again := s.accCounts()
	for i := range got {
		if !slices.Equal(got[i].User.PCs(), again[i].User.PCs()) || got[i].Comm != again[i].Comm {
			t.Fatalf("count %d differs between two drains of the same stacks", i)
		}
	}
}
