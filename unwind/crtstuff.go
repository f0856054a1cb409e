package unwind

import (
	"debug/elf"
	"encoding/binary"
)

// CrtSection names the synthetic CFI crtFrames adds.
const CrtSection = "synthetic crtstuff"

// GCC's crtbegin.o code (crtstuff.c: deregister_tm_clones,
// register_tm_clones, __do_global_dtors_aux, frame_dummy) carries no CFI.
// ld.so runs it at every start and exit (frame_dummy from .init_array,
// __do_global_dtors_aux from .fini_array), and a sample there was walked
// by frame pointers from an rbp that ld.so's code keeps no frame in: a
// garbage caller. Of the four, only __do_global_dtors_aux makes a frame:
//
//	[endbr64]; cmpb $0,completed(%rip); jne 1f; push %rbp;
//	cmpq $0,__cxa_finalize@GOT(%rip); mov %rsp,%rbp; ... pop %rbp; ret
//
// dtorsCode is that start, -1 for the bytes of rip-relative offsets and
// the jump's displacement.
var dtorsCode = []int{0x80, 0x3d, -1, -1, -1, -1, 0x00, 0x75, -1, 0x55, 0x48, 0x83, 0x3d, -1, -1, -1, -1, 0x00, 0x48, 0x89, 0xe5}

const (
	dtorsPush   = 9   // offset of push %rbp in dtorsCode
	maxDtorsEnd = 64  // pop %rbp; ret within this many bytes of the start
	maxCrtGap   = 256 // the frameless code around it that the rules span
)

// crtFrames gives the code no FDE covers around __do_global_dtors_aux, in
// .text, its rules: CFA = rsp+8 (none of crtbegin's functions pushes),
// rsp+16 with rbp saved at CFA-16 from __do_global_dtors_aux's push to its
// pop. It returns nil when .text has no such code outside FDEs.
func crtFrames(f *elf.File, frames []*CFI, read sectionData) *CFI {
	s := f.Section(".text")
	if !hasCFI(frames) || s == nil || s.Type != elf.SHT_PROGBITS {
		return nil
	}
	code, err := read(s)
	if err != nil {
		return nil
	}
	fn, pop, ok := findDtors(code)
	if !ok || covered(frames, s.Addr+uint64(fn), s.Addr+uint64(pop+2)) {
		return nil
	}
	lo, hi := crtGap(frames, s.Addr, s.Addr+uint64(len(code)), s.Addr+uint64(fn), s.Addr+uint64(pop+2))
	push := s.Addr + uint64(fn) + dtorsPush + 1
	if code[fn] == 0xf3 {
		push += uint64(len(endbr64))
	}
	// DW_CFA_advance_loc2 to after the push; DW_CFA_def_cfa_offset 16;
	// DW_CFA_offset rbp, cfa-16; DW_CFA_advance_loc2 to after the pop;
	// DW_CFA_def_cfa_offset 8; DW_CFA_restore rbp.
	instr := binary.LittleEndian.AppendUint16([]byte{0x03}, uint16(push-lo))
	instr = append(instr, 0x0e, 16, 0x80|regRBP, 2, 0x03)
	instr = binary.LittleEndian.AppendUint16(instr, uint16(s.Addr+uint64(pop)+1-push))
	instr = append(instr, 0x0e, 8, 0xc0|regRBP)
	return &CFI{Section: CrtSection, CIEs: []*CIE{synthCIE(atEntry)}, data: instr,
		FDEs: []FDE{{Offset: -1, Start: lo, End: hi, ninstr: uint32(len(instr))}}}
}

// findDtors finds __do_global_dtors_aux in code: its start (its endbr64
// when it has one) and the offset of its pop %rbp, followed by ret.
func findDtors(code []byte) (fn, pop int, ok bool) {
	for i := 0; i+len(dtorsCode) <= len(code); i++ {
		if !matchCode(code[i:], dtorsCode) {
			continue
		}
		fn = i
		if i >= len(endbr64) && string(code[i-len(endbr64):i]) == string(endbr64) {
			fn -= len(endbr64)
		}
		for j := i + len(dtorsCode); j+1 < len(code) && j < fn+maxDtorsEnd; j++ {
			if code[j] == 0x5d && code[j+1] == 0xc3 {
				return fn, j, true
			}
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// matchCode reports whether b starts with pattern (-1 matches any byte).
func matchCode(b []byte, pattern []int) bool {
	for k, p := range pattern {
		if p >= 0 && int(b[k]) != p {
			return false
		}
	}
	return true
}

// crtGap is the stretch of [textLo, textHi) that no FDE covers around
// [fnLo, fnHi), at most maxCrtGap bytes on either side.
func crtGap(frames []*CFI, textLo, textHi, fnLo, fnHi uint64) (lo, hi uint64) {
	lo, hi = max(textLo, fnLo-min(fnLo, maxCrtGap)), min(textHi, fnHi+maxCrtGap)
	for _, fr := range frames {
		for i := range fr.FDEs {
			d := &fr.FDEs[i]
			if d.End <= fnLo && d.End > lo {
				lo = d.End
			}
			if d.Start >= fnHi && d.Start < hi {
				hi = d.Start
			}
		}
	}
	return lo, hi
}
