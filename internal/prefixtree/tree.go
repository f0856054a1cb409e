// Package prefixtree holds sequences that share their prefixes as one
// tree: a sequence is the node its last element reached, added or found
// one element at a time from the root. Stacks are such sequences (read
// root first, processes and probes share their outer frames), and held
// this way 2M distinct stacks of 46 frames (tests/bench/13) take the ~10M
// nodes of their tree, 24 bytes each, where a slice per stack took 96M
// slots of 8 bytes and an allocation each.
//
// A node's children are a list (first, next), indexed in a map once a
// node has more than bigFanout of them: most frames have few callees,
// and a hash index over all nodes would cost as much as the nodes. Nodes
// live in chunks that never move, so a tree grows without copying and a
// Node handed to another goroutine (through a lock or a channel) can be
// read there while the tree grows: Append and Value read only what was
// written before the node was created. Written here: no library keeps a
// generic prefix tree in chunks with parent links.
package prefixtree

import (
	"sync/atomic"
	"unsafe"
)

// Node is one sequence of a Tree; Root is the empty one.
type Node uint32

// Root is the empty sequence, every tree's first node.
const Root Node = 0

// chunkSize is the number of nodes one allocation holds.
const chunkSize = 1 << 12

// bigFanout is the number of children past which a node's are looked up
// in Tree.big rather than by walking its list.
const bigFanout = 16

// bigBit marks, in node.first, a node whose children are in Tree.big.
const bigBit = 1 << 31

type node[T comparable] struct {
	val         T
	parent      uint32
	first, next uint32 // first child (with bigBit), next sibling; 0: none
}

type chunk[T comparable] [chunkSize]node[T]

type bigKey[T comparable] struct {
	parent uint32
	val    T
}

// Tree is a set of sequences of T. Add is not safe for concurrent use;
// reading nodes already handed over is (see the package doc).
type Tree[T comparable] struct {
	chunks atomic.Pointer[[]*chunk[T]] // replaced, never changed, when a chunk is added
	n      uint32
	big    map[bigKey[T]]uint32
}

// New returns a tree holding the empty sequence alone.
func New[T comparable]() *Tree[T] {
	t := &Tree[T]{big: map[bigKey[T]]uint32{}}
	t.newNode(node[T]{})
	return t
}

func (t *Tree[T]) node(i uint32) *node[T] {
	return &(*t.chunks.Load())[i/chunkSize][i%chunkSize]
}

func (t *Tree[T]) newNode(nd node[T]) uint32 {
	i := t.n
	if i%chunkSize == 0 {
		var cs []*chunk[T]
		if p := t.chunks.Load(); p != nil {
			cs = *p
		}
		cs = append(cs[:len(cs):len(cs)], new(chunk[T]))
		t.chunks.Store(&cs)
	}
	*t.node(i) = nd
	t.n++
	return i
}

// Len is the number of nodes, Root included.
func (t *Tree[T]) Len() int { return int(t.n) }

// Bytes is about what the nodes hold (not counting the index of big nodes).
func (t *Tree[T]) Bytes() int64 {
	return int64(len(*t.chunks.Load())) * chunkSize * int64(unsafe.Sizeof(node[T]{}))
}

// Child is the sequence parent followed by v, added if new.
func (t *Tree[T]) Child(parent Node, v T) Node {
	p := t.node(uint32(parent))
	if p.first&bigBit != 0 {
		if c, ok := t.big[bigKey[T]{uint32(parent), v}]; ok {
			return Node(c)
		}
		return t.add(parent, p, v)
	}
	n := 0
	for c := p.first; c != 0; n++ {
		cn := t.node(c)
		if cn.val == v {
			return Node(c)
		}
		c = cn.next
	}
	if n >= bigFanout {
		t.index(parent, p)
	}
	return t.add(parent, p, v)
}

// add makes v a new child of parent (p).
func (t *Tree[T]) add(parent Node, p *node[T], v T) Node {
	first := p.first &^ bigBit
	c := t.newNode(node[T]{val: v, parent: uint32(parent), next: first})
	p = t.node(uint32(parent)) // newNode may have added a chunk, not moved one: same p
	p.first = c | p.first&bigBit
	if p.first&bigBit != 0 {
		t.big[bigKey[T]{uint32(parent), v}] = c
	}
	return Node(c)
}

// index puts the children of parent (p) in t.big.
func (t *Tree[T]) index(parent Node, p *node[T]) {
	for c := p.first; c != 0; c = t.node(c).next {
		t.big[bigKey[T]{uint32(parent), t.node(c).val}] = c
	}
	p.first |= bigBit
}

// Add is the sequence seq (root first), added if new.
func (t *Tree[T]) Add(seq []T) Node {
	n := Root
	for _, v := range seq {
		n = t.Child(n, v)
	}
	return n
}

// AddReversed is the sequence seq read from its end (a stack captured
// leaf first, added root first).
func (t *Tree[T]) AddReversed(seq []T) Node {
	n := Root
	for i := len(seq) - 1; i >= 0; i-- {
		n = t.Child(n, seq[i])
	}
	return n
}

// Value is n's last element (the zero T for Root).
func (t *Tree[T]) Value(n Node) T { return t.node(uint32(n)).val }

// Parent is n without its last element (Root for Root).
func (t *Tree[T]) Parent(n Node) Node { return Node(t.node(uint32(n)).parent) }

// AppendReversed appends n's elements to dst last first (a stack leaf
// first).
func (t *Tree[T]) AppendReversed(dst []T, n Node) []T {
	for n != Root {
		nd := t.node(uint32(n))
		dst = append(dst, nd.val)
		n = Node(nd.parent)
	}
	return dst
}

// Append appends n's elements to dst, first first.
func (t *Tree[T]) Append(dst []T, n Node) []T {
	start := len(dst)
	dst = t.AppendReversed(dst, n)
	s := dst[start:]
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return dst
}

// Depth is the number of elements of n.
func (t *Tree[T]) Depth(n Node) int {
	d := 0
	for ; n != Root; d++ {
		n = Node(t.node(uint32(n)).parent)
	}
	return d
}
