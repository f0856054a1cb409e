package output

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"
)

// stackTree merges rendered stacks by frame names into a prefix tree: a
// collapsed line is a path from the root, and its count is the node's
// self. The tree is what both collapsed stacks (walked in line order) and
// flamegraphs (the nodes wide enough to draw) are made from, so no line's
// text and no stack's frame list is ever held: 2M distinct stacks of ~46
// frames (manystacks under a uprobe) held 1.8 GB as keys and 2.2 GB as
// frame lists, and share ~8M nodes of 24 bytes here.
type stackTree struct {
	names []string          // by name id
	ids   map[string]uint32 // name -> id
	nodes [][]treeNode      // chunks of nodeChunk nodes (node); node 0 is the root, "all"
	n     uint32            // nodes in all
	big   map[childKey]uint32
	byRef map[frameNameKey]uint32 // a frame's name id
	opts  Options
	buf   []*Frame // a sample's kernel stack (sampleNode)
	memo  frameMemo
}

// treeNode is one frame reached by one path. Children are a list (first,
// next); a node with more than bigFanout children has them indexed in
// stackTree.big as well.
type treeNode struct {
	name        uint32
	kind        frameKind
	big         bool
	first, next uint32 // 0: none (the root is no one's child)
	self        uint64 // the weight of the stacks ending here
}

type childKey struct{ parent, name uint32 }

// nodeChunk is how many nodes one allocation holds: the tree grows
// without copying, where a slice grown by append held up to twice its
// nodes (10M for 2M distinct stacks) besides the copies.
const nodeChunk = 1 << 12

// node is node i.
func (t *stackTree) node(i uint32) *treeNode { return &t.nodes[i/nodeChunk][i%nodeChunk] }

// newNode appends nd and returns its index.
func (t *stackTree) newNode(nd treeNode) uint32 {
	i := t.n
	if i%nodeChunk == 0 {
		t.nodes = append(t.nodes, make([]treeNode, nodeChunk))
	}
	*t.node(i) = nd
	t.n++
	return i
}

// bigFanout is the number of children past which a node's are looked up
// in a map rather than by walking its list.
const bigFanout = 16

func newStackTree(opts Options) *stackTree {
	t := &stackTree{ids: map[string]uint32{}, big: map[childKey]uint32{},
		byRef: map[frameNameKey]uint32{}, opts: opts}
	t.newNode(treeNode{name: t.nameID("all"), kind: kindMeta})
	return t
}

// collapseTree merges the samples accepted by keep into a stackTree,
// leaving out samples weighing zero.
func collapseTree(p *Profile, opts Options, keep func(*Sample) bool) *stackTree {
	t := newStackTree(opts)
	for i := range p.Samples {
		s := &p.Samples[i]
		if w := p.Weight(s); w > 0 && (keep == nil || keep(s)) {
			t.node(t.sampleNode(s)).self += w
		}
	}
	return t
}

// sampleNode is the node of s's rendered stack (see sampleFrames).
func (t *stackTree) sampleNode(s *Sample) uint32 {
	n := uint32(0)
	if t.opts.WithProbe {
		n = t.child(n, t.nameID(Sanitize(s.Probe)), kindMeta)
	}
	if g := s.Container.Frame(); g != "" {
		n = t.child(n, t.nameID(Sanitize(g)), kindMeta)
	}
	n = t.child(n, t.nameID(commName(s)), kindMeta)
	n = t.userNode(n, s.User)
	t.buf = s.Kernel.Append(t.buf[:0])
	w := wokenAt(t.buf)
	for i, f := range t.buf {
		if i >= w { // the waker's (--wakers)
			n = t.child(n, t.frameID(f, false), userKind(f))
			continue
		}
		n = t.child(n, t.frameID(f, true), kindKernel)
	}
	return n
}

func userKind(f *Frame) frameKind {
	switch {
	case f.Kernel:
		return kindKernel
	case f.Inline:
		return kindInline
	}
	return kindUser
}

func (t *stackTree) nameID(name string) uint32 {
	id, ok := t.ids[name]
	if !ok {
		id = uint32(len(t.names))
		t.names = append(t.names, name)
		t.ids[name] = id
	}
	return id
}

// frameID is f's name id, rendered once per frame (samples share frames).
func (t *stackTree) frameID(f *Frame, kernel bool) uint32 {
	k := frameNameKey{f, kernel}
	id, ok := t.byRef[k]
	if !ok {
		id = t.nameID(FrameName(*f, kernel, t.opts.Lines))
		t.byRef[k] = id
	}
	return id
}

// child is parent's child named name, added (with kind) if new.
func (t *stackTree) child(parent, name uint32, kind frameKind) uint32 {
	if t.node(parent).big {
		if c, ok := t.big[childKey{parent, name}]; ok {
			return c
		}
		return t.add(parent, name, kind)
	}
	n := 0
	for c := t.node(parent).first; c != 0; c = t.node(c).next {
		if t.node(c).name == name {
			return c
		}
		n++
	}
	c := t.add(parent, name, kind)
	if n+1 > bigFanout {
		t.node(parent).big = true
		for c := t.node(parent).first; c != 0; c = t.node(c).next {
			t.big[childKey{parent, t.node(c).name}] = c
		}
	}
	return c
}

func (t *stackTree) add(parent, name uint32, kind frameKind) uint32 {
	c := t.newNode(treeNode{name: name, kind: kind, next: t.node(parent).first})
	t.node(parent).first = c
	if t.node(parent).big {
		t.big[childKey{parent, name}] = c
	}
	return c
}

// lineItem is, among a node's children, either the line ending at one
// (self) or the lines going through it (its children's).
type lineItem struct {
	node    uint32
	through bool
}

// writeCollapsed writes one line per node with a self weight,
// "name;name;... COUNT", sorted bytewise by the names joined with ';'
// (as WriteCollapsed promises): among siblings the line ending at a
// node sorts as its name, the lines through it as its name and ';'
// (another sibling's name can sort between the two: "foo" < "foo.cold" <
// "foo;").
func (t *stackTree) writeCollapsed(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var scratch []lineItem
	var path, num []byte
	var walk func(n uint32)
	walk = func(n uint32) {
		start := len(scratch)
		scratch = t.appendItems(scratch, n)
		slices.SortFunc(scratch[start:], t.compareItems)
		for i := start; i < len(scratch); i++ {
			it := scratch[i]
			mark := len(path)
			if mark > 0 {
				path = append(path, ';')
			}
			path = append(path, t.names[t.node(it.node).name]...)
			if it.through {
				walk(it.node)
			} else {
				bw.Write(path)
				num = strconv.AppendUint(append(num[:0], ' '), t.node(it.node).self, 10)
				bw.Write(append(num, '\n'))
			}
			path = path[:mark]
		}
		scratch = scratch[:start]
	}
	walk(0)
	return bw.Flush()
}

// appendItems appends n's children's line items.
func (t *stackTree) appendItems(dst []lineItem, n uint32) []lineItem {
	for c := t.node(n).first; c != 0; c = t.node(c).next {
		if t.node(c).self > 0 {
			dst = append(dst, lineItem{c, false})
		}
		if t.node(c).first != 0 {
			dst = append(dst, lineItem{c, true})
		}
	}
	return dst
}

func (t *stackTree) compareItems(a, b lineItem) int {
	return compareJoined(t.names[t.node(a.node).name], a.through, t.names[t.node(b.node).name], b.through)
}

// compareJoined compares a (followed by ';' if semiA) with b (followed by
// ';' if semiB) bytewise, without joining them.
func compareJoined(a string, semiA bool, b string, semiB bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	ta, tb := tail(a[n:], semiA), tail(b[n:], semiB)
	return strings.Compare(ta, tb)
}

// tail is rest followed by ';' if semi. rest is empty for at least one of
// the two compared, so only a short string is ever made.
func tail(rest string, semi bool) string {
	if !semi {
		return rest
	}
	if rest == "" {
		return ";"
	}
	return rest + ";"
}

// totals are the subtree weights of the nodes, by node id.
func (t *stackTree) totals() []uint64 {
	tot := make([]uint64, t.n)
	// Children are added after their parents: a backward pass sees every
	// child before its parent.
	for i := t.n; i > 0; i-- {
		tot[i-1] += t.node(i - 1).self
		for c := t.node(i - 1).first; c != 0; c = t.node(c).next {
			tot[i-1] += tot[c]
		}
	}
	return tot
}

// flame is the flamegraph tree of the nodes weighing at least minFraction
// of the total; a narrower node is kept only as a childless placeholder
// (layout leaves it out, its width stays a gap in its parent).
func (t *stackTree) flame(minFraction float64) *flameNode {
	tot := t.totals()
	minCount := max(uint64(float64(tot[0])*minFraction), 1)
	var build func(n uint32) *flameNode
	build = func(n uint32) *flameNode {
		f := &flameNode{name: t.names[t.node(n).name], kind: t.node(n).kind, count: tot[n]}
		if tot[n] < minCount {
			return f
		}
		for c := t.node(n).first; c != 0; c = t.node(c).next {
			f.children = append(f.children, build(c))
		}
		slices.SortFunc(f.children, func(a, b *flameNode) int { return cmp.Compare(a.name, b.name) })
		return f
	}
	return build(0)
}
