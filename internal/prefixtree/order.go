package prefixtree

// Preorder returns each node's rank in a depth-first walk of the tree
// from the root (by node: rank[n]), nil for a frozen tree (its child
// lists are gone). Sequences visited in that order share as much of
// their prefixes as sequences can: work that follows the sequences one
// after another (AddAlong into another tree, a cache of the last one)
// starts where the last one forked. Siblings come in the order of their
// lists (the latest added first).
func (t *Tree[T]) Preorder() []uint32 {
	if t.frozen {
		return nil
	}
	rank := make([]uint32, t.n)
	stack := []uint32{uint32(Root)}
	for r := uint32(0); len(stack) > 0; r++ {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		rank[n] = r
		for c := t.kids(n).first &^ bigBit; c != 0; c = t.kids(c).next {
			stack = append(stack, c)
		}
	}
	return rank
}

// Path is the sequence AddAlong added last and the nodes along it: the
// next sequence is found from where the two part.
type Path[T comparable] struct {
	vals  []T
	nodes []Node
}

// AddAlong is Add(seq), walking from the node where seq leaves p (the
// sequence added with p last) rather than from the root, and makes seq
// p's sequence. Sequences added in Preorder cost only their new part.
func (t *Tree[T]) AddAlong(p *Path[T], seq []T) Node {
	k := p.Shares(seq)
	n := Root
	if k > 0 {
		n = p.nodes[k-1]
	}
	p.vals, p.nodes = append(p.vals[:k], seq[k:]...), p.nodes[:k]
	for _, v := range seq[k:] {
		n = t.Child(n, v)
		p.nodes = append(p.nodes, n)
	}
	return n
}

// Shares is how many of seq's first elements are p's.
func (p *Path[T]) Shares(seq []T) int {
	k := 0
	for k < len(seq) && k < len(p.vals) && p.vals[k] == seq[k] {
		k++
	}
	return k
}
