package prefixtree

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestAddShares(t *testing.T) {
	tr := New[uint64]()
	tests := []struct {
		seq   []uint64
		nodes int // after adding seq
	}{
		{nil, 1},
		{[]uint64{1, 2, 3}, 4},
		{[]uint64{1, 2, 3}, 4},
		{[]uint64{1, 2, 4}, 5},
		{[]uint64{1}, 5},
		{[]uint64{2, 2}, 7},
	}
	for _, tc := range tests {
		n := tr.Add(tc.seq)
		if got := tr.Append(nil, n); !slices.Equal(got, tc.seq) {
			t.Errorf("Append(Add(%v)) = %v", tc.seq, got)
		}
		if d := tr.Depth(n); d != len(tc.seq) {
			t.Errorf("Depth(Add(%v)) = %d", tc.seq, d)
		}
		if tr.Len() != tc.nodes {
			t.Errorf("after %v: %d nodes, want %d", tc.seq, tr.Len(), tc.nodes)
		}
	}
	if a, b := tr.Add([]uint64{1, 2, 3}), tr.AddReversed([]uint64{3, 2, 1}); a != b {
		t.Errorf("Add and AddReversed of one sequence: nodes %d and %d", a, b)
	}
	if got := tr.AppendReversed(nil, tr.Add([]uint64{1, 2, 4})); !slices.Equal(got, []uint64{4, 2, 1}) {
		t.Errorf("AppendReversed = %v", got)
	}
}

// TestRandom checks sequences against a map of their strings, across
// chunks and big fanouts.
func TestRandom(t *testing.T) {
	tr := New[uint64]()
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]Node{}
	for range 20000 {
		seq := make([]uint64, r.IntN(12))
		for i := range seq {
			seq[i] = r.Uint64N(uint64(2 + i*8)) // fanouts from 2 to past bigFanout
		}
		n := tr.Add(seq)
		key := fmt.Sprint(seq)
		if m, ok := seen[key]; ok && m != n {
			t.Fatalf("%v: node %d, earlier %d", seq, n, m)
		}
		seen[key] = n
		if got := tr.Append(nil, n); !slices.Equal(got, seq) {
			t.Fatalf("Append(Add(%v)) = %v", seq, got)
		}
	}
	distinct := map[Node]bool{}
	for _, n := range seen {
		distinct[n] = true
	}
	if len(distinct) != len(seen) {
		t.Errorf("%d sequences share %d nodes", len(seen), len(distinct))
	}
	if tr.Len() <= chunkSize || len(tr.big) == 0 {
		t.Errorf("%d nodes, %d indexed: the test misses chunks or big fanouts", tr.Len(), len(tr.big))
	}
}

// TestReadWhileGrowing reads nodes handed over through a channel while
// the tree grows (go test -race).
func TestReadWhileGrowing(t *testing.T) {
	tr := New[uint64]()
	ch := make(chan Node, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		var buf []uint64
		for n := range ch {
			buf = tr.AppendReversed(buf[:0], n)
			if len(buf) != 3 || buf[0] != buf[1]+1 || buf[1] != buf[2]+1 {
				t.Errorf("node %d reads %v", n, buf)
			}
		}
	})
	for i := range uint64(3 * chunkSize) {
		ch <- tr.Add([]uint64{i, i + 1, i + 2})
	}
	close(ch)
	wg.Wait()
}

func BenchmarkAdd(b *testing.B) {
	// manystacks' shape: 2^levels paths of a binary choice per level.
	const levels = 16
	seq := make([]uint64, 2*levels)
	for b.Loop() {
		tr := New[uint64]()
		for i := range 1 << levels {
			for l := range levels {
				seq[2*l], seq[2*l+1] = uint64(i>>l&1), 9
			}
			tr.Add(seq)
		}
	}
}

// A frozen tree reads as before and costs less; adding to it finds the
// sequences it holds (big fanouts included) and adds new ones.
func TestFreeze(t *testing.T) {
	tr := New[uint64]()
	var seqs [][]uint64
	var nodes []Node
	for i := range uint64(3 * chunkSize) {
		seq := []uint64{i % 3, i % 40, i} // root fanout 3, then 40 (big), then 1
		seqs, nodes = append(seqs, seq), append(nodes, tr.Add(seq))
	}
	before, n := tr.Bytes(), tr.Len()
	tr.Freeze()
	if tr.Bytes() >= before*2/3 {
		t.Errorf("frozen: %d bytes, %d before", tr.Bytes(), before)
	}
	for i, seq := range seqs {
		if got := tr.Append(nil, nodes[i]); !slices.Equal(got, seq) {
			t.Fatalf("frozen: node %d reads %v, want %v", nodes[i], got, seq)
		}
	}
	for i, seq := range seqs {
		if got := tr.Add(seq); got != nodes[i] {
			t.Fatalf("after a freeze, Add(%v) = %d, want %d", seq, got, nodes[i])
		}
	}
	if tr.Len() != n {
		t.Errorf("%d nodes after adding what the tree held, want %d", tr.Len(), n)
	}
	if m := tr.Add([]uint64{1, 5, 1 << 40}); tr.Len() != n+1 || tr.Parent(m) != tr.Add([]uint64{1, 5}) {
		t.Errorf("a new sequence after a freeze: %d nodes, want %d", tr.Len(), n+1)
	}
	if len(tr.big) == 0 {
		t.Error("no big fanout indexed after thawing")
	}
}
