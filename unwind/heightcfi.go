package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/probee/probee/internal/safeelf"
)

// frag encodes the states a.stackHeights found for the function at addr
// as CFI: one FDE per run of adjacent reached instructions, a row wherever
// the rule changes.
func (a *analysis) frag(addr uint64) heightFrag {
	h := heightFrag{returns: a.returns}
	for _, t := range a.tailCalls {
		h.tailCalls = append(h.tailCalls, addr+uint64(t))
	}
	var fde *FDE
	var last heightRule
	var loc uint64 // of the last row
	for off, n := range a.lens {
		if n == 0 {
			continue
		}
		pc, r := addr+uint64(off), a.states[off].rule()
		switch {
		case fde == nil || fde.End != pc:
			h.fdes = append(h.fdes, FDE{Offset: -1, Start: pc, instr: uint32(len(h.data))})
			fde = &h.fdes[len(h.fdes)-1]
			h.data, loc = r.appendCFI(h.data), pc
		case r != last:
			h.data = binary.LittleEndian.AppendUint32(append(h.data, 0x04), uint32(pc-loc)) // DW_CFA_advance_loc4
			h.data, loc = r.appendCFI(h.data), pc
		}
		last = r
		fde.End = pc + uint64(n)
		fde.ninstr = uint32(len(h.data)) - fde.instr
	}
	return h
}

// heightRule is what of a height a rule says.
type heightRule struct {
	cfaBP   bool
	off     int32
	rbpSlot int32 // > 0: saved at CFA - rbpSlot; 0: unchanged; -1: unknown
}

func (h height) rule() heightRule {
	r := heightRule{cfaBP: h.cfaBP, off: h.sp}
	if h.cfaBP {
		r.off = h.bp
	}
	switch {
	case h.saved > 0 && h.saved%8 == 0:
		r.rbpSlot = h.saved
	case h.saved > 0 || h.dirty:
		r.rbpSlot = -1
	}
	return r
}

// appendCFI appends the call frame instructions that set r:
// DW_CFA_def_cfa rsp or rbp, then DW_CFA_offset, DW_CFA_undefined or
// DW_CFA_same_value for rbp.
func (r heightRule) appendCFI(b []byte) []byte {
	reg := byte(regRSP)
	if r.cfaBP {
		reg = regRBP
	}
	b = binary.AppendUvarint(append(b, 0x0c, reg), uint64(r.off))
	switch {
	case r.rbpSlot > 0:
		return binary.AppendUvarint(append(b, 0x80|regRBP), uint64(r.rbpSlot/8))
	case r.rbpSlot < 0:
		return append(b, 0x07, regRBP)
	}
	return append(b, 0x08, regRBP)
}

// entrySet is where functions start, of the addresses asked about: a
// jump there is a tail call, not a jump to another part of the same
// function.
type entrySet struct {
	starts []uint64    // function symbols', sorted
	plts   [][2]uint64 // .plt sections: every stub is an entry
}

func (e entrySet) has(pc uint64) bool {
	if _, ok := slices.BinarySearch(e.starts, pc); ok {
		return true
	}
	return slices.ContainsFunc(e.plts, func(r [2]uint64) bool { return pc >= r[0] && pc < r[1] })
}

// funcEntries finds which of targets are function entries: the starts of
// f's function symbols (in tabs), but for the parts of functions GCC and
// BOLT split off and name .cold or .warm, and the stubs of its .plt
// sections.
func funcEntries(f *elf.File, read sectionData, tabs []symTable, targets []uint64) entrySet {
	var e entrySet
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".plt") && s.Flags&elf.SHF_EXECINSTR != 0 {
			e.plts = append(e.plts, [2]uint64{s.Addr, s.Addr + s.Size})
		}
	}
	if len(targets) == 0 {
		return e
	}
	want := make(map[uint64]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	for _, t := range tabs {
		e.starts = t.appendEntries(e.starts, f, read, want)
	}
	slices.Sort(e.starts)
	return e
}

// appendEntries appends the entries among want of t's functions; it reads
// t's names only once it meets one of want.
func (t symTable) appendEntries(dst []uint64, f *elf.File, read sectionData, want map[uint64]bool) []uint64 {
	var names []byte
	bad := false
	t.eachSym(f, func(sym safeelf.Sym) {
		if bad || !sym.IsFunc() || !want[sym.Value] {
			return
		}
		if names == nil {
			var err error
			if names, err = read(t.names); err != nil {
				bad = true
				return
			}
		}
		if !splitPart(names, sym.Name) {
			dst = append(dst, sym.Value)
		}
	})
	return dst
}

// splitPart reports whether the symbol name at off in names is that of a
// part split off a function (.cold, .warm) or unreadable.
func splitPart(names []byte, off uint32) bool {
	name, ok := symName(names, off)
	return !ok || bytes.Contains(name, []byte(".cold")) || bytes.Contains(name, []byte(".warm"))
}

// symName returns the symbol name at off in a string table: up to its
// NUL, or to the table's end; ok is false when off is past the end.
func symName(names []byte, off uint32) (name []byte, ok bool) {
	if uint64(off) >= uint64(len(names)) {
		return nil, false
	}
	name = names[off:]
	if n := bytes.IndexByte(name, 0); n >= 0 {
		name = name[:n]
	}
	return name, true
}
