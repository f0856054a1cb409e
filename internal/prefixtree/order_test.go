package prefixtree

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomSeqs are n sequences of up to 12 elements from a small alphabet
// (many shared prefixes, some nodes past bigFanout).
func randomSeqs(n int) [][]uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]uint64, n)
	for i := range out {
		s := make([]uint64, 1+r.IntN(12))
		for j := range s {
			s[j] = uint64(r.IntN(3 + 20*(j%2)))
		}
		out[i] = s
	}
	return out
}

// Preorder ranks every node after its parent, each subtree's nodes
// together (a node's rank + its subtree's size is the next sibling's
// start), and is nil for a frozen tree.
func TestPreorder(t *testing.T) {
	tr := New[uint64]()
	for _, s := range randomSeqs(2000) {
		tr.Add(s)
	}
	rank := tr.Preorder()
	size := make([]uint32, tr.Len()) // subtree sizes, children after parents in node order
	for n := tr.Len() - 1; n >= 0; n-- {
		size[n]++
		if n > 0 {
			size[tr.Parent(Node(n))] += size[n]
		}
	}
	seen := make([]bool, tr.Len())
	for n := 1; n < tr.Len(); n++ {
		p := tr.Parent(Node(n))
		if rank[n] <= rank[p] || rank[n]+size[n] > rank[p]+size[p] {
			t.Fatalf("node %d ranked %d (subtree %d), its parent %d ranked %d (subtree %d)", n, rank[n], size[n], p, rank[p], size[p])
		}
		if seen[rank[n]] {
			t.Fatalf("rank %d given twice", rank[n])
		}
		seen[rank[n]] = true
	}
	tr.Freeze()
	if tr.Preorder() != nil {
		t.Error("Preorder of a frozen tree is not nil")
	}
}

// AddAlong finds the nodes Add finds, in any order, and in Preorder the
// sequences it adds walk only their new part.
func TestAddAlong(t *testing.T) {
	seqs := randomSeqs(2000)
	tr := New[uint64]()
	want := make([]Node, len(seqs))
	for i, s := range seqs {
		want[i] = tr.Add(s)
	}
	var p Path[uint64]
	inTurn := 0
	for i, s := range seqs {
		inTurn += p.Shares(s)
		if got := tr.AddAlong(&p, s); got != want[i] {
			t.Fatalf("AddAlong(%v) = %d, Add gave %d", s, got, want[i])
		}
	}
	rank := tr.Preorder()
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(rank[want[a]]) - int(rank[want[b]]) })
	shared := 0
	for _, i := range order {
		shared += p.Shares(seqs[i])
		if got := tr.AddAlong(&p, seqs[i]); got != want[i] {
			t.Fatalf("in preorder: AddAlong(%v) = %d, Add gave %d", seqs[i], got, want[i])
		}
	}
	t.Logf("elements shared with the sequence before: %d in preorder, %d in turn", shared, inTurn)
	if shared < 2*inTurn {
		t.Errorf("in preorder, %d elements were shared with the sequence before, in turn %d: want twice as many", shared, inTurn)
	}
}
