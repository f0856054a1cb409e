package gopclntab

import (
	"github.com/probee/probee/internal/safeelf"
)

// Frames returns the source frames of address pc: the calls inlined there,
// innermost first, each with the line executing in it, then the physical
// function with the line of the outermost call site, as the runtime's
// traceback gives them. It returns nil when no function holds pc. A
// malformed table gives the physical frame alone, or nil, never a panic.
func (t *Table) Frames(pc uint64) (out []Frame) {
	_ = safeelf.Guard(".gopclntab", func() error { out = t.frames(pc); return nil })
	return out
}

// Inlines reports whether t gives the calls inlined at an address (Frames
// lists them before the physical function). It does not for a table older
// than Go 1.20, which debug/gosym reads without its inline trees
// (legacy.go), nor for a Go 1.20+ table whose functions' data was not
// found (no module data pointing at the table, a go:func.* where no tree
// reads, or no function with a tree at all, as in a -gcflags=-l build):
// such a table's Frames give the physical function alone.
func (t *Table) Inlines() bool { return t.legacy == nil && t.gofunc != nil }

// maxInline bounds the inlined calls of one address (a corrupt tree could
// loop).
const maxInline = 64

func (t *Table) frames(pc uint64) []Frame {
	if t.legacy != nil {
		return t.legacyFrames(pc)
	}
	f, ok := t.find(pc)
	if !ok {
		return nil
	}
	name, ok := t.baseName(f)
	if !ok {
		return nil
	}
	names, pcs := t.inlined(f, pc)
	out := make([]Frame, 0, len(pcs))
	for i, at := range pcs {
		file, line := t.lineAt(f, at)
		if i < len(names) {
			out = append(out, Frame{Func: names[i], File: file, Line: line, Inline: true})
		} else {
			out = append(out, Frame{Func: t.name(f.entry, name), File: file, Line: line})
		}
	}
	return out
}

// inlined returns the calls inlined at pc in function f, innermost first,
// and the pcs whose lines their frames give: pc, then each call's site;
// the last pc is the physical function's.
func (t *Table) inlined(f fn, pc uint64) (names []string, pcs []uint64) {
	pcs = []uint64{pc}
	for t.gofunc != nil && len(names) < maxInline {
		name, parent, found := t.inlinedAt(f, pc)
		if !found || parent >= f.end-f.entry {
			break
		}
		pc = f.entry + parent
		names, pcs = append(names, name), append(pcs, pc)
	}
	return names, pcs
}

// Indexes the runtime gives a function's inline tree (its data) and the
// pc-value table of the tree's entry at each pc (internal/abi).
const (
	pcdataInlTreeIndex = 2
	funcdataInlTree    = 3
)

// inlineCall is the size of an entry of an inline tree (Go 1.20 on):
// funcID and padding (4 bytes), then the name's offset, the parent pc
// (the offset from the entry of an instruction at the call site) and the
// start line, 4 bytes each.
const inlineCall = 16

// inlinedAt returns the name and the parent pc (an offset from the entry)
// of the innermost call inlined at pc in function f; false where nothing
// is inlined at pc.
func (t *Table) inlinedAt(f fn, pc uint64) (string, uint64, bool) {
	tree, ok := t.treeOf(f)
	if !ok {
		return "", 0, false
	}
	table := uint64(t.bo.Uint32(f.data[funcPcdata+4*pcdataInlTreeIndex:]))
	i, ok := t.pcvalueAt(table, f.entry, pc)
	if !ok || i < 0 {
		return "", 0, false
	}
	at := uint64(tree) + inlineCall*uint64(i)
	if at+inlineCall > uint64(len(t.gofunc)) {
		return "", 0, false
	}
	nameOff, parent := t.call(t.gofunc[at:])
	name, ok := t.funcName(nameOff)
	return name, uint64(parent), ok && parent >= 0
}

// call returns the name's offset and the parent pc of the inline-tree
// entry at the start of b (inlineCall bytes at least).
func (t *Table) call(b []byte) (nameOff, parent int32) {
	return int32(t.bo.Uint32(b[4:])), int32(t.bo.Uint32(b[8:]))
}

// findGofunc returns the address of the functions' data (go:func.*): the
// first of addrs whose inline trees read, where read(addr, b) reads the
// binary's bytes at addr; the first tree entry of up to 64 functions
// names a function (the start of a name) and a call site inside its
// function. 0 when none does, or no function has a tree.
func (t *Table) findGofunc(addrs []uint64, read func(addr uint64, b []byte) bool) uint64 {
	trees := t.someTrees(64)
	if len(trees) == 0 {
		return 0
	}
	for _, addr := range addrs {
		if t.treesRead(trees, addr, read) {
			return addr
		}
	}
	return 0
}

// tree is where a function's inline tree is, as an offset in the
// functions' data, and the function's size.
type tree struct {
	off, size uint64
}

// someTrees returns the trees of up to n functions that have one.
func (t *Table) someTrees(n int) []tree {
	var out []tree
	for i := range t.nfuncs() {
		f, ok := t.function(i)
		if !ok {
			continue
		}
		if off, ok := t.treeOf(f); ok {
			if out = append(out, tree{off: uint64(off), size: f.end - f.entry}); len(out) == n {
				break
			}
		}
	}
	return out
}

// treeOf returns the offset of function f's inline tree in the functions'
// data; false when it has none.
func (t *Table) treeOf(f fn) (uint32, bool) {
	npc := uint64(t.bo.Uint32(f.data[funcNpcdata:]))
	nfd := uint64(f.data[funcNfuncdata])
	if npc <= pcdataInlTreeIndex || nfd <= funcdataInlTree || funcPcdata+4*(npc+nfd) > uint64(len(f.data)) {
		return 0, false
	}
	off := t.bo.Uint32(f.data[funcPcdata+4*npc+4*funcdataInlTree:])
	return off, off != ^uint32(0)
}

// treesRead reports whether the first entry of each tree, in functions'
// data at addr, names a function and a call site inside the tree's
// function.
func (t *Table) treesRead(trees []tree, addr uint64, read func(uint64, []byte) bool) bool {
	var call [inlineCall]byte
	for _, tr := range trees {
		if !read(addr+tr.off, call[:]) {
			return false
		}
		name, parent := t.call(call[:])
		if name < 0 || int(name) >= len(t.names) || (name > 0 && t.names[name-1] != 0) ||
			parent < 0 || uint64(parent) >= tr.size {
			return false
		}
	}
	return true
}
