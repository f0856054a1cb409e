package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"slices"
)

// Synthetic CFI for code that linkers and crt files leave without any:
// lld's .plt (pltFrames) and crti/crtn's .init and .fini (initFrames). Each
// is added only where no FDE covers the section and its code has the
// known layout.

// PLTSection names the synthetic CFI pltFrames adds.
const PLTSection = "synthetic .plt"

// The opcodes that mark a lazy-binding .plt in the layout GNU ld and lld
// give x86_64 without IBT: a 16-byte header (push GOT+8; jmp *GOT+16),
// then 16-byte entries (jmp *GOT[n]; push n; jmp header).
var (
	pltHeader = []byte{0xff, 0x35} // push rel32(%rip), then at 6: jmp *rel32(%rip)
	pltJump   = []byte{0xff, 0x25}
)

// The call frame instructions of the two FDEs pltFrames makes, after
// atEntry's: the header, entered from an entry that pushed its index (CFA
// = rsp+16), pushes once more at offset 6 (rsp+24); an entry's CFA is
// rsp+8 until its push at offset 6 and rsp+16 from its jump at 11 on, the
// expression GNU ld emits (matchPLT).
var (
	pltHeaderCFI = []byte{0x0e, 16, 0x40 | 6, 0x0e, 24}
	pltEntryCFI  = []byte{0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
)

// pltFrames gives a lazy-binding .plt that no FDE covers the rules GNU ld's
// CFI for it would give. lld emits no CFI for .plt (rustc's
// librustc_driver, Rust's libLLVM): without rules, a sample in a stub,
// a jump between caller and callee, is cut there, although its caller is
// at [rsp]. It returns nil when .plt is absent, covered, or not in the
// layout pltHeader describes.
func pltFrames(f *elf.File, frames []*CFI, read sectionData) *CFI {
	if !hasCFI(frames) {
		return nil
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
	data := append(append([]byte{}, pltHeaderCFI...), pltEntryCFI...)
	return &CFI{Section: PLTSection, CIEs: []*CIE{synthCIE(atEntry)}, data: data, FDEs: []FDE{
		{Offset: -1, Start: s.Addr, End: s.Addr + 16, ninstr: uint32(len(pltHeaderCFI))},
		{Offset: -1, Start: s.Addr + 16, End: s.Addr + s.Size, instr: uint32(len(pltHeaderCFI)), ninstr: uint32(len(pltEntryCFI))},
	}}
}

// atEntry are the initial instructions of a CIE for code entered by a
// call: CFA = rsp+8 and the return address at CFA-8 (DW_CFA_def_cfa rsp 8;
// DW_CFA_offset rip, cfa-8).
var atEntry = []byte{0x0c, 7, 8, 0x90, 1}

// synthCIE is the CIE of synthetic CFI (x86_64 factors), with initial
// instructions initial.
func synthCIE(initial []byte) *CIE {
	return &CIE{Version: 1, CodeAlign: 1, DataAlign: -8, RAReg: 16, AddrSize: 8, Initial: initial}
}

// hasCFI reports whether frames hold any FDE: without CFI at all, frame
// pointers are used throughout, and no synthetic CFI is added but
// .init's and .fini's (initFrames).
func hasCFI(frames []*CFI) bool {
	return slices.ContainsFunc(frames, func(fr *CFI) bool { return len(fr.FDEs) > 0 })
}

// covered reports whether an FDE of frames overlaps [lo, hi).
func covered(frames []*CFI, lo, hi uint64) bool {
	for _, fr := range frames {
		for i := range fr.FDEs {
			if d := &fr.FDEs[i]; d.Start < hi && d.End > lo {
				return true
			}
		}
	}
	return false
}

// InitSection names the synthetic CFI initFrames adds.
const InitSection = "synthetic .init/.fini"

// The code crti.o and crtn.o put around .init and .fini, which carry no
// CFI: an optional endbr64, sub $8,%rsp ... add $8,%rsp; ret. Objects may
// add calls in between (node's OpenSSL calls OPENSSL_cpuid_setup from
// .init), and then _init is on the stack of everything they call.
var (
	endbr64     = []byte{0xf3, 0x0f, 0x1e, 0xfa}
	initProlog  = []byte{0x48, 0x83, 0xec, 0x08} // sub $8,%rsp
	initEpilog  = []byte{0x48, 0x83, 0xc4, 0x08, 0xc3}
	maxInitCode = uint64(4096)
)

// initFrames gives .init and .fini, where no FDE covers them and their
// code has the crti/crtn frame above, their rules: CFA = rsp+8 up to the
// sub, rsp+16 from there to the ret, rsp+8 at the ret. It returns nil when
// neither qualifies. Unlike the other synthetic CFI, it is given to a
// file without any other CFI too: a library of data only (ICU's
// libicudata) has no code but these, which ld.so runs.
func initFrames(f *elf.File, frames []*CFI, read sectionData) *CFI {
	out := &CFI{Section: InitSection, CIEs: []*CIE{synthCIE(atEntry)}}
	for _, name := range []string{".init", ".fini"} {
		s := f.Section(name)
		if s == nil || s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 || s.Size > maxInitCode ||
			covered(frames, s.Addr, s.Addr+s.Size) {
			continue
		}
		code, err := read(s)
		if err != nil {
			continue
		}
		prolog := len(initProlog)
		if bytes.HasPrefix(code, endbr64) {
			prolog += len(endbr64)
		}
		if len(code) < prolog+len(initEpilog) || !bytes.Equal(code[prolog-len(initProlog):prolog], initProlog) ||
			!bytes.HasSuffix(code, initEpilog) {
			continue
		}
		// DW_CFA_advance_loc2 prolog; DW_CFA_def_cfa_offset 16;
		// DW_CFA_advance_loc2 to the ret; DW_CFA_def_cfa_offset 8.
		instr := binary.LittleEndian.AppendUint16([]byte{0x03}, uint16(prolog))
		instr = append(instr, 0x0e, 16, 0x03)
		instr = binary.LittleEndian.AppendUint16(instr, uint16(len(code)-1-prolog))
		instr = append(instr, 0x0e, 8)
		out.FDEs = append(out.FDEs, FDE{Offset: -1, Start: s.Addr, End: s.Addr + uint64(len(code)),
			instr: uint32(len(out.data)), ninstr: uint32(len(instr))})
		out.data = append(out.data, instr...)
	}
	if len(out.FDEs) == 0 {
		return nil
	}
	return out
}
