package output

import (
	"slices"
	"strings"
)

// flameNode is one box of a flamegraph: a frame reached by one path from the
// root, with the total count of the stacks going through it.
type flameNode struct {
	name     string
	kind     frameKind
	count    uint64
	children []*flameNode
	index    map[string]int // child name -> position, only while building
}

// buildTree merges stacks into a tree whose root ("all") holds the total.
// Children are sorted by name, so the layout does not depend on input order.
func buildTree(stacks []stack) *flameNode {
	root := &flameNode{name: "all", kind: kindMeta}
	for _, s := range stacks {
		root.count += s.count
		n := root
		for _, f := range s.frames {
			n = n.child(f)
			n.count += s.count
		}
	}
	root.finish()
	return root
}

func (n *flameNode) child(f node) *flameNode {
	if n.index == nil {
		n.index = map[string]int{}
	}
	if i, ok := n.index[f.name]; ok {
		return n.children[i]
	}
	c := &flameNode{name: f.name, kind: f.kind}
	n.index[f.name] = len(n.children)
	n.children = append(n.children, c)
	return c
}

// finish sorts children recursively and drops the build indexes.
func (n *flameNode) finish() {
	n.index = nil
	slices.SortFunc(n.children, func(a, b *flameNode) int { return strings.Compare(a.name, b.name) })
	for _, c := range n.children {
		c.finish()
	}
}

// box is a laid-out frame: its node, depth (0 = root) and horizontal extent
// in counts from the left edge.
type box struct {
	n     *flameNode
	depth int
	start uint64
}

// layout places the nodes whose count is at least minCount, depth-first,
// and returns the boxes and the maximum depth + 1. Narrower nodes are left
// out with their whole subtree (their parent keeps the full width, leaving
// a gap), which bounds the output size for profiles with long tails.
func layout(root *flameNode, minCount uint64) ([]box, int) {
	var boxes []box
	depth := 0
	var walk func(n *flameNode, d int, start uint64)
	walk = func(n *flameNode, d int, start uint64) {
		if n.count < minCount || n.count == 0 {
			return
		}
		boxes = append(boxes, box{n, d, start})
		depth = max(depth, d+1)
		for _, c := range n.children {
			walk(c, d+1, start)
			start += c.count
		}
	}
	walk(root, 0, 0)
	return boxes, depth
}
