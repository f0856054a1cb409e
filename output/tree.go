package output

// flameNode is one box of a flamegraph: a frame reached by one path from the
// root, with the total count of the stacks going through it.
type flameNode struct {
	name     string
	kind     frameKind
	count    uint64
	children []*flameNode // sorted by name
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
