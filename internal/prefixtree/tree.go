// Package prefixtree holds sequences that share their prefixes as one
// tree: a sequence is the node its last element reached, added or found
// one element at a time from the root. Stacks are such sequences (read
// root first, processes and probes share their outer frames), and held
// this way 2M distinct stacks of 46 frames (tests/bench/13) take the ~12M
// nodes of their tree, 20 bytes each for pcs or frame pointers, where a
// slice per stack took 96M slots of 8 bytes and an allocation each.
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

// kids are a node's children: its first child (with bigBit) and its
// next sibling; 0: none. Values and parents live apart from them (a node
// costs the size of T plus 12 bytes, without padding), and a frozen tree
// (Freeze) drops them: it then costs T plus 4.
type kids struct{ first, next uint32 }

type chunk[T comparable] struct {
	vals    [chunkSize]T
	parents [chunkSize]uint32
	kids    *[chunkSize]kids // nil in a frozen tree
}

type bigKey[T comparable] struct {
	parent uint32
	val    T
}

// Tree is a set of sequences of T. Adding and Freeze are not safe for
// concurrent use; reading nodes already handed over is (see the package
// doc).
type Tree[T comparable] struct {
	chunks atomic.Pointer[[]*chunk[T]] // replaced, never changed, when a chunk is added
	n      uint32
	big    map[bigKey[T]]uint32
	frozen bool
}

// New returns a tree holding the empty sequence alone.
func New[T comparable]() *Tree[T] {
	t := &Tree[T]{big: map[bigKey[T]]uint32{}}
	var zero T
	t.newNode(zero, 0, 0)
	return t
}

func (t *Tree[T]) chunk(i uint32) *chunk[T] { return (*t.chunks.Load())[i/chunkSize] }

func (t *Tree[T]) kids(i uint32) *kids { return &t.chunk(i).kids[i%chunkSize] }

func (t *Tree[T]) val(i uint32) T { return t.chunk(i).vals[i%chunkSize] }

func (t *Tree[T]) newNode(v T, parent, next uint32) uint32 {
	i := t.n
	if i%chunkSize == 0 {
		var cs []*chunk[T]
		if p := t.chunks.Load(); p != nil {
			cs = *p
		}
		cs = append(cs[:len(cs):len(cs)], &chunk[T]{kids: new([chunkSize]kids)})
		t.chunks.Store(&cs)
	}
	c := t.chunk(i)
	c.vals[i%chunkSize], c.parents[i%chunkSize], c.kids[i%chunkSize] = v, parent, kids{next: next}
	t.n++
	return i
}

// Freeze drops what finding a child takes (two thirds of a node of
// pcs), for a tree that is read from now on: the tree of a run's stacks
// once it is over. Adding to a frozen tree first rebuilds it (a walk of
// every node).
func (t *Tree[T]) Freeze() {
	if t.frozen {
		return
	}
	for _, c := range *t.chunks.Load() {
		c.kids = nil
	}
	t.big, t.frozen = nil, true
}

// thaw rebuilds the children of a frozen tree.
func (t *Tree[T]) thaw() {
	t.big, t.frozen = map[bigKey[T]]uint32{}, false
	for _, c := range *t.chunks.Load() {
		c.kids = new([chunkSize]kids)
	}
	fanout := map[uint32]int{}
	for i := uint32(1); i < t.n; i++ {
		p := t.chunk(i).parents[i%chunkSize]
		pk := t.kids(p)
		t.kids(i).next, pk.first = pk.first&^bigBit, i|pk.first&bigBit
		if fanout[p]++; fanout[p] == bigFanout+1 {
			t.index(Node(p), pk)
		} else if pk.first&bigBit != 0 {
			t.big[bigKey[T]{p, t.val(i)}] = i
		}
	}
}

// Len is the number of nodes, Root included.
func (t *Tree[T]) Len() int { return int(t.n) }

// Bytes is about what the nodes hold (not counting the index of big nodes).
func (t *Tree[T]) Bytes() int64 {
	per := int64(unsafe.Sizeof(chunk[T]{}))
	if !t.frozen {
		per += int64(unsafe.Sizeof([chunkSize]kids{}))
	}
	return int64(len(*t.chunks.Load())) * per
}

// Child is the sequence parent followed by v, added if new.
func (t *Tree[T]) Child(parent Node, v T) Node {
	if t.frozen {
		t.thaw()
	}
	p := t.kids(uint32(parent))
	if p.first&bigBit != 0 {
		if c, ok := t.big[bigKey[T]{uint32(parent), v}]; ok {
			return Node(c)
		}
		return t.add(parent, v)
	}
	n := 0
	for c := p.first; c != 0; n++ {
		if t.val(c) == v {
			return Node(c)
		}
		c = t.kids(c).next
	}
	if n >= bigFanout {
		t.index(parent, p)
	}
	return t.add(parent, v)
}

// add makes v a new child of parent.
func (t *Tree[T]) add(parent Node, v T) Node {
	first := t.kids(uint32(parent)).first
	c := t.newNode(v, uint32(parent), first&^bigBit)
	p := t.kids(uint32(parent)) // newNode adds chunks, never moves one: the same p
	p.first = c | first&bigBit
	if first&bigBit != 0 {
		t.big[bigKey[T]{uint32(parent), v}] = c
	}
	return Node(c)
}

// index puts the children of parent (p) in t.big.
func (t *Tree[T]) index(parent Node, p *kids) {
	for c := p.first &^ bigBit; c != 0; c = t.kids(c).next {
		t.big[bigKey[T]{uint32(parent), t.val(c)}] = c
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
func (t *Tree[T]) Value(n Node) T { return t.val(uint32(n)) }

// Parent is n without its last element (Root for Root).
func (t *Tree[T]) Parent(n Node) Node { return Node(t.chunk(uint32(n)).parents[uint32(n)%chunkSize]) }

// AppendReversed appends n's elements to dst last first (a stack leaf
// first).
func (t *Tree[T]) AppendReversed(dst []T, n Node) []T {
	for n != Root {
		c := t.chunk(uint32(n))
		i := uint32(n) % chunkSize
		dst = append(dst, c.vals[i])
		n = Node(c.parents[i])
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
		n = t.Parent(n)
	}
	return d
}
