package unwind

import (
	"bytes"
	"debug/elf"
	"slices"
)

// PLTSection names the synthetic CFI pltFrames adds.
const PLTSection = "synthetic .plt"

// pltCode is the start of a lazy-binding .plt in the layout GNU ld and lld
// give x86_64 without IBT: a 16-byte header (push GOT+8; jmp *GOT+16),
// then 16-byte entries (jmp *GOT[n]; push n; jmp header).
var (
	pltHeader = []byte{0xff, 0x35} // push rel32(%rip), then at 6: jmp *rel32(%rip)
	pltJump   = []byte{0xff, 0x25}
)

// pltInstructions are the call frame instructions of the two FDEs
// pltFrames makes, in the CIE's terms (CFA = rsp+8, return address at
// CFA-8): the header, entered from an entry that pushed its index
// (CFA = rsp+16), pushes once more at offset 6 (rsp+24); an entry's CFA is
// rsp+8 until its push at offset 6 and rsp+16 from its jump at 11 on, the
// expression GNU ld emits (matchPLT).
var (
	pltCIEInit   = []byte{0x0c, 7, 8, 0x90, 1} // DW_CFA_def_cfa rsp 8; DW_CFA_offset rip, cfa-8
	pltHeaderCFI = []byte{0x0e, 16, 0x40 | 6, 0x0e, 24}
	pltEntryCFI  = []byte{0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
)

// pltFrames gives a lazy-binding .plt that no FDE covers the rules GNU ld's
// CFI for it would give. lld emits no CFI for .plt (rustc's
// librustc_driver, Rust's libLLVM): without rules, a sample in a stub,
// a jump between caller and callee, is cut there, although its caller is
// at [rsp]. It returns nil when .plt is absent, covered, or not in the
// layout pltHeader describes.
func pltFrames(f *elf.File, frames []*Frames, read sectionData) *Frames {
	if !slices.ContainsFunc(frames, func(fr *Frames) bool { return len(fr.FDEs) > 0 }) {
		return nil // no CFI at all: frame pointers are used throughout
	}
	s := f.Section(".plt")
	if s == nil || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 ||
		s.Size < 32 || s.Size%16 != 0 || s.Addr%16 != 0 || covered(frames, s.Addr, s.Addr+s.Size) {
		return nil
	}
	code, err := read(s)
	if err != nil || len(code) < 32 || !bytes.HasPrefix(code, pltHeader) || !bytes.HasPrefix(code[6:], pltJump) ||
		!bytes.HasPrefix(code[16:], pltJump) || code[22] != 0x68 || code[27] != 0xe9 {
		return nil
	}
	cie := &CIE{Version: 1, CodeAlign: 1, DataAlign: -8, RAReg: 16, AddrSize: 8, Initial: pltCIEInit}
	data := append(append([]byte{}, pltHeaderCFI...), pltEntryCFI...)
	return &Frames{Section: PLTSection, CIEs: []*CIE{cie}, data: data, FDEs: []FDE{
		{Offset: -1, Start: s.Addr, End: s.Addr + 16, ninstr: uint32(len(pltHeaderCFI))},
		{Offset: -1, Start: s.Addr + 16, End: s.Addr + s.Size, instr: uint32(len(pltHeaderCFI)), ninstr: uint32(len(pltEntryCFI))},
	}}
}

// covered reports whether an FDE of frames overlaps [lo, hi).
func covered(frames []*Frames, lo, hi uint64) bool {
	for _, fr := range frames {
		for i := range fr.FDEs {
			if d := &fr.FDEs[i]; d.Start < hi && d.End > lo {
				return true
			}
		}
	}
	return false
}
