package output

import "github.com/probee/probee/internal/prefixtree"

// Stack is a sample's stack of frames, root first: a node of the prefix
// tree of an Interner (or of its own, StackOf). Stacks are compared by
// identity: equal stacks of one Interner are equal values, and stacks of
// different trees differ (writers merge those by name). The zero Stack
// is empty.
type Stack struct {
	t *prefixtree.Tree[*Frame]
	n prefixtree.Node
}

// StackOf is a Stack of frames (root first) in a tree of its own, for
// tests and small profiles; a profile's samples share theirs through
// Interner.Stack.
func StackOf(frames ...*Frame) Stack {
	if len(frames) == 0 {
		return Stack{}
	}
	t := prefixtree.New[*Frame]()
	return Stack{t, t.Add(frames)}
}

// Append appends s's frames to dst, root first.
func (s Stack) Append(dst []*Frame) []*Frame {
	if s.t == nil {
		return dst
	}
	return s.t.Append(dst, s.n)
}

// Frames is s's frames, root first, in a new slice (nil when empty).
func (s Stack) Frames() []*Frame { return s.Append(nil) }

// Len is the number of frames.
func (s Stack) Len() int {
	if s.t == nil {
		return 0
	}
	return s.t.Depth(s.n)
}

// Empty says whether s has no frames.
func (s Stack) Empty() bool { return s.n == prefixtree.Root }

// hasMarker reports whether a frame of s is a marker (isMarker).
func (s Stack) hasMarker() bool {
	for n := s.n; n != prefixtree.Root; n = s.t.Parent(n) {
		if isMarker(*s.t.Value(n)) {
			return true
		}
	}
	return false
}

// Leaf is s's last frame, nil when empty.
func (s Stack) Leaf() *Frame {
	if s.Empty() {
		return nil
	}
	return s.t.Value(s.n)
}
