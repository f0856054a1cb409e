package gopclntab

import (
	"bytes"
	"encoding/binary"

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

// maxInline bounds the inlined calls of one address (a corrupt tree could
// loop).
const maxInline = 64

func (t *Table) frames(pc uint64) []Frame {
	fn := t.tab.PCToFunc(pc)
	if fn == nil {
		return nil
	}
	names, pcs := t.inlined(fn.Entry, fn.End, pc)
	out := make([]Frame, 0, len(pcs))
	for i, at := range pcs {
		file, line, _ := t.tab.PCToLine(at)
		if line <= 0 { // padding after the code
			file, line = "", 0
		}
		if i < len(names) {
			out = append(out, Frame{Func: names[i], File: file, Line: line, Inline: true})
		} else {
			out = append(out, Frame{Func: t.name(fn.Entry, fn.Name), File: file, Line: line})
		}
	}
	return out
}

// inlined returns the calls inlined at pc in the function [entry, end),
// innermost first, and the pcs whose lines their frames give: pc, then
// each call's site; the last pc is the physical function's.
func (t *Table) inlined(entry, end, pc uint64) (names []string, pcs []uint64) {
	pcs = []uint64{pc}
	f, ok := t.funcData(entry)
	for ok && t.gofunc != nil && len(names) < maxInline {
		name, parent, found := t.inlinedAt(f, entry, pc)
		if !found || parent >= end-entry {
			break
		}
		pc = entry + parent
		names, pcs = append(names, name), append(pcs, pc)
	}
	return names, pcs
}

// Offsets in a function's entry (_func) of a Go 1.20+ table: the count of
// pc-value tables, the count of data offsets, then the tables' offsets
// (4 bytes each), then the data offsets (4 bytes each).
const (
	funcNpcdata   = 28
	funcNfuncdata = 43
	funcPcdata    = 44
)

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

// funcData returns the entry (_func) of the function at entry, found in
// the function table, which lists nfunc+1 (entry offset, entry's offset)
// pairs by ascending entry.
func (t *Table) funcData(entry uint64) ([]byte, bool) {
	if t.names == nil || entry < t.text {
		return nil, false
	}
	want := entry - t.text
	lo, hi := uint64(0), min(t.nfunc, uint64(len(t.pcln))/8)
	for lo < hi {
		mid := lo + (hi-lo)/2
		off := uint64(t.bo.Uint32(t.pcln[8*mid:]))
		switch {
		case off == want:
			f := uint64(t.bo.Uint32(t.pcln[8*mid+4:]))
			if f+funcPcdata > uint64(len(t.pcln)) {
				return nil, false
			}
			return t.pcln[f:], true
		case off < want:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return nil, false
}

// inlinedAt returns the name and the parent pc (an offset from the entry)
// of the innermost call inlined at pc in function f (its _func), which
// starts at entry; false where nothing is inlined at pc.
func (t *Table) inlinedAt(f []byte, entry, pc uint64) (string, uint64, bool) {
	npc := uint64(t.bo.Uint32(f[funcNpcdata:]))
	nfd := uint64(f[funcNfuncdata])
	if npc <= pcdataInlTreeIndex || nfd <= funcdataInlTree ||
		funcPcdata+4*(npc+nfd) > uint64(len(f)) {
		return "", 0, false
	}
	table := uint64(t.bo.Uint32(f[funcPcdata+4*pcdataInlTreeIndex:]))
	tree := t.bo.Uint32(f[funcPcdata+4*npc+4*funcdataInlTree:])
	if table == 0 || table >= uint64(len(t.pctab)) || tree == ^uint32(0) {
		return "", 0, false
	}
	i, ok := t.pcvalue(t.pctab[table:], entry, pc)
	if !ok || i < 0 {
		return "", 0, false
	}
	at := uint64(tree) + inlineCall*uint64(i)
	if at+inlineCall > uint64(len(t.gofunc)) {
		return "", 0, false
	}
	call := t.gofunc[at:]
	name, ok := t.funcName(int32(t.bo.Uint32(call[4:])))
	parent := int32(t.bo.Uint32(call[8:]))
	return name, uint64(parent), ok && parent >= 0
}

// pcvalue returns the value table p gives pc in the function at entry. A
// table is a sequence of (value delta, pc delta) pairs of varints, the
// value's zigzag-coded, starting from -1 at entry; a zero value delta
// after the first pair ends it.
func (t *Table) pcvalue(p []byte, entry, pc uint64) (int32, bool) {
	val, at := int32(-1), entry
	for first := true; ; first = false {
		dv, n := binary.Uvarint(p)
		if n <= 0 || (dv == 0 && !first) {
			return 0, false
		}
		p = p[n:]
		v := uint32(dv)
		val += int32(-(v & 1) ^ (v >> 1))
		dpc, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		at += dpc * t.quantum
		if pc < at {
			return val, true
		}
	}
}

// funcName returns the NUL-terminated name at off in the function names.
func (t *Table) funcName(off int32) (string, bool) {
	if off < 0 || int(off) >= len(t.names) {
		return "", false
	}
	b := t.names[off:]
	end := bytes.IndexByte(b, 0)
	if end <= 0 {
		return "", false
	}
	return symName(string(b[:end])), true
}
