package objfile

import (
	"debug/dwarf"
	"path/filepath"
)

// funcNode is a subprogram with code, or an inlined call
// (DW_TAG_inlined_subroutine), of one compile unit.
type funcNode struct {
	ranges   [][2]uint64
	end      int          // index after the node's last descendant
	origin   dwarf.Offset // entry naming the function
	callFile int64        // inlined calls: DW_AT_call_file, -1 when absent
	callLine int          // inlined calls: DW_AT_call_line
	inlined  bool
}

// maxNodeDepth bounds the DIE nesting followed in one unit.
const maxNodeDepth = 1024

// readNodes walks the children of the unit entry cu (r positioned just
// after it) and lists its functions and inlined calls with their nesting.
func readNodes(d *dwarf.Data, r *dwarf.Reader, cu *dwarf.Entry) []funcNode {
	if !cu.Children {
		return nil
	}
	var nodes []funcNode
	open := []int{-1} // per open DIE: index of the node it is, or -1
	for len(open) > 0 {
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			break
		}
		if e.Tag == 0 {
			closeNode(nodes, open[len(open)-1])
			open = open[:len(open)-1]
			continue
		}
		idx := -1
		if n, ok := newNode(d, e); ok {
			idx = len(nodes)
			n.end = idx + 1
			nodes = append(nodes, n)
		}
		if e.Children && len(open) < maxNodeDepth {
			open = append(open, idx)
		} else if e.Children {
			r.SkipChildren()
		}
	}
	for len(open) > 0 { // unterminated unit: close what is open
		closeNode(nodes, open[len(open)-1])
		open = open[:len(open)-1]
	}
	return nodes
}

// closeNode records that node i's descendants end at the current length.
func closeNode(nodes []funcNode, i int) {
	if i >= 0 && i < len(nodes) {
		nodes[i].end = len(nodes)
	}
}

// newNode turns a subprogram or inlined call with code into a node.
func newNode(d *dwarf.Data, e *dwarf.Entry) (funcNode, bool) {
	inlined := e.Tag == dwarf.TagInlinedSubroutine
	if !inlined && e.Tag != dwarf.TagSubprogram {
		return funcNode{}, false
	}
	if e.Val(dwarf.AttrLowpc) == nil && e.Val(dwarf.AttrRanges) == nil {
		return funcNode{}, false
	}
	rs, err := d.Ranges(e)
	if err != nil || len(rs) == 0 {
		return funcNode{}, false
	}
	n := funcNode{ranges: rs, origin: e.Offset, inlined: inlined, callFile: -1}
	if inlined {
		if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
			n.origin = o
		}
		if f, ok := e.Val(dwarf.AttrCallFile).(int64); ok {
			n.callFile = f
		}
		if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok && l > 0 && l < 1<<31 {
			n.callLine = int(l)
		}
	}
	return n, true
}

func (n *funcNode) contains(pc uint64) bool {
	for _, r := range n.ranges {
		if pc >= r[0] && pc < r[1] {
			return true
		}
	}
	return false
}

// chain returns the indexes of the nodes holding pc, outermost first: a
// function, then the inlined calls nested in it.
func (u *unitInfo) chain(pc uint64) []int {
	var out []int
	lo, hi := 0, len(u.nodes)
	for lo < hi {
		n := &u.nodes[lo]
		end := min(max(n.end, lo+1), hi)
		if n.contains(pc) {
			out = append(out, lo)
			hi = end
			lo++
			continue
		}
		lo = end
	}
	return out
}

// frames expands pc into its inlined calls, innermost first, then the
// function they were inlined into. Each inlined frame has the line executing
// in it; the frame outside it has the line of the call (DW_AT_call_line).
func (di *dwarfInfo) frames(u *unitInfo, pc uint64) []Source {
	file, line := u.lineAt(pc)
	ch := u.chain(pc)
	var out []Source
	phys := Source{}
	for j := len(ch) - 1; j >= 0; j-- {
		n := &u.nodes[ch[j]]
		name, sym := di.name(n.origin)
		if !n.inlined {
			phys.Name, phys.Symbol = name, sym
			break
		}
		out = append(out, Source{Name: name, Symbol: sym, File: file, Line: line, Inline: true})
		file, line = u.file(n.callFile), n.callLine
	}
	phys.File, phys.Line = file, line
	return append(out, phys)
}

// name returns the demangled and raw name of the function entry at off,
// following DW_AT_abstract_origin and DW_AT_specification a few hops.
func (di *dwarfInfo) name(off dwarf.Offset) (string, string) {
	if n, ok := di.names[off]; ok {
		return n[0], n[1]
	}
	var plain, linkage string
	r := di.d.Reader()
	at := off
	for hop := 0; hop < 4 && linkage == ""; hop++ {
		r.Seek(at)
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if s, ok := e.Val(dwarf.AttrLinkageName).(string); ok {
			linkage = s
		} else if s, ok := e.Val(attrMIPSLinkageName).(string); ok {
			linkage = s
		}
		if s, ok := e.Val(dwarf.AttrName).(string); ok && plain == "" {
			plain = s
		}
		next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			next, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok || next == at {
			break
		}
		at = next
	}
	n := [2]string{plain, plain}
	if linkage != "" {
		n[1] = linkage
		if full, _ := DemangleName(linkage); full != "" {
			n[0] = full
		} else if plain == "" {
			n[0] = linkage
		}
	}
	di.names[off] = n
	return n[0], n[1]
}

// cleanPath cleans a source path, keeping "" as "".
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older GCC emits
// instead of DW_AT_linkage_name.
const attrMIPSLinkageName = dwarf.Attr(0x2007)
