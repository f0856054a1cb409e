package unwind

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// One FDE found through .eh_frame_hdr, without parsing .eh_frame: what
// names the code at a stripped program's entry point (objfile's _start
// label) needs, where building the whole table would read every FDE of
// the file. The binary search table is searched where it lies (8 bytes an
// entry, ~20 reads: node's is 600 KB), and only the FDE found and its CIE
// are read and parsed, by the parser ParseCFI uses.

// ehHdrTable is the only table encoding searched: DW_EH_PE_datarel |
// DW_EH_PE_sdata4 pairs, relative to .eh_frame_hdr, as GCC and LLVM
// write it.
const ehHdrTable = peDataRel | peSData4

// maxFDERecord bounds the bytes of one CIE or FDE record FDEAt reads
// (records are tens of bytes: initial instructions and augmentation data).
const maxFDERecord = 64 << 10

// FDEAt returns the range [start, end) of the .eh_frame FDE covering pc
// in f, found through .eh_frame_hdr's sorted table. ok is false when f has
// no such table or one in another encoding, when the table or the FDE is
// malformed (the FDE must start where the table says), or when no FDE
// covers pc.
func FDEAt(f *elf.File, pc uint64) (start, end uint64, ok bool) {
	hdr, eh := f.Section(".eh_frame_hdr"), f.Section(EhFrame)
	if hdr == nil || eh == nil || hdr.Type == elf.SHT_NOBITS || eh.Type == elf.SHT_NOBITS {
		return 0, 0, false
	}
	t, ok := readHdrTable(hdr)
	if !ok {
		return 0, 0, false
	}
	initial, fde, ok := t.find(pc)
	if !ok || fde < eh.Addr || fde-eh.Addr >= eh.Size {
		return 0, 0, false
	}
	d, ok := fdeOf(f, eh, fde-eh.Addr)
	if !ok || d.Start != initial || pc < d.Start || pc >= d.End {
		return 0, 0, false
	}
	return d.Start, d.End, true
}

// hdrTable is .eh_frame_hdr's binary search table: n pairs of the initial
// location of an FDE and the FDE's address, sorted by location.
type hdrTable struct {
	sec *elf.Section
	off int64 // of the first pair in the section
	n   uint64
}

// readHdrTable reads .eh_frame_hdr's header (version 1, eh_frame_ptr,
// fde_count, the table's encoding).
func readHdrTable(hdr *elf.Section) (hdrTable, bool) {
	head := make([]byte, min(hdr.Size, 4+8+8))
	if _, err := hdr.ReadAt(head, 0); err != nil || len(head) < 4 || head[0] != 1 {
		return hdrTable{}, false
	}
	ptrEnc, countEnc, tableEnc := head[1], head[2], head[3]
	if countEnc == peOmit || tableEnc != ehHdrTable {
		return hdrTable{}, false
	}
	r := &reader{buf: head, pos: 4}
	b := &Bases{Section: hdr.Addr, Data: hdr.Addr}
	if _, err := readEncoded(r, ptrEnc&^peIndir, b, 0, 8); err != nil || ptrEnc == peOmit {
		return hdrTable{}, false
	}
	n, err := readEncoded(r, countEnc, b, 0, 8)
	if err != nil || r.err || n == 0 || n > (hdr.Size-uint64(r.pos))/8 {
		return hdrTable{}, false
	}
	return hdrTable{sec: hdr, off: int64(r.pos), n: n}, true
}

// find returns the pair of the last FDE starting at or below pc: its
// initial location and its address.
func (t hdrTable) find(pc uint64) (initial, fde uint64, ok bool) {
	bad := false
	at := func(i int, field int64) uint64 { // pair i's location (field 0) or FDE address (4)
		var w [4]byte
		if _, err := t.sec.ReadAt(w[:], t.off+8*int64(i)+field); err != nil {
			bad = true
		}
		return t.sec.Addr + uint64(int64(int32(binary.LittleEndian.Uint32(w[:]))))
	}
	i := sort.Search(int(t.n), func(i int) bool { return at(i, 0) > pc }) - 1
	if i < 0 || bad {
		return 0, 0, false
	}
	initial, fde = at(i, 0), at(i, 4)
	return initial, fde, !bad
}

// fdeOf parses the FDE at offset off of .eh_frame, with its CIE.
func fdeOf(f *elf.File, eh *elf.Section, off uint64) (FDE, bool) {
	rec, ok := readRecord(eh, off)
	if !ok {
		return FDE{}, false
	}
	p := newFrameParser(EhFrame, rec, bases(f, eh.Addr+off))
	r, id, idOff, is64, _, err := p.header(0)
	if err != nil || r.buf == nil || p.isCIE(id, is64) || id > off+uint64(idOff) {
		return FDE{}, false
	}
	cieOff := off + uint64(idOff) - id
	c, ok := cieOf(f, eh, cieOff)
	if !ok {
		return FDE{}, false
	}
	d, err := p.fde(&r, 0, c)
	return d, err == nil
}

// cieOf parses the CIE at offset off of .eh_frame.
func cieOf(f *elf.File, eh *elf.Section, off uint64) (*CIE, bool) {
	rec, ok := readRecord(eh, off)
	if !ok {
		return nil, false
	}
	c, err := newFrameParser(EhFrame, rec, bases(f, eh.Addr+off)).cie(0)
	return c, err == nil
}

// readRecord reads the CIE or FDE record at offset off of section s, its
// length field included, up to maxFDERecord bytes.
func readRecord(s *elf.Section, off uint64) ([]byte, bool) {
	if off >= s.Size {
		return nil, false
	}
	var head [12]byte
	n := min(uint64(len(head)), s.Size-off)
	if _, err := s.ReadAt(head[:n], int64(off)); err != nil {
		return nil, false
	}
	r := &reader{buf: head[:n]}
	size := uint64(r.u32()) + 4
	if size == 0xffffffff+4 {
		size = r.u64() + 12
	}
	if r.err || size > maxFDERecord || size > s.Size-off {
		return nil, false
	}
	rec := make([]byte, size)
	if _, err := s.ReadAt(rec, int64(off)); err != nil {
		return nil, false
	}
	return rec, true
}
