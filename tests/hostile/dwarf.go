package hostile

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
)

// StubFile is the source file the images' DWARF places the stub in (line
// 1 of it).
const StubFile = "hostile.c"

// cie is an .eh_frame CIE as GCC writes it: version 1, augmentation "zR",
// code alignment 1, data alignment -8, return address r16, FDE pointers
// pc-relative sdata4; CFA = rsp+8, return address at CFA-8.
func cie() []byte {
	body := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0}
	return withLength(body)
}

// fde is an FDE at offset at of an .eh_frame at address addr, of the CIE
// at offset 0, over [begin, begin+size).
func fde(addr uint64, at int, begin, size uint64, insns []byte) []byte {
	body := make([]byte, 13, 13+len(insns))
	le.PutUint32(body, uint32(at+4)) // CIE pointer: back to offset 0
	body = append(body, insns...)
	b := withLength(body)
	// pc_begin is pc-relative: its field is at at+8 in the section.
	le.PutUint32(b[8:], uint32(int64(begin)-int64(addr)-int64(at+8)))
	le.PutUint32(b[12:], uint32(size))
	return b
}

// withLength prefixes body with its 32-bit length, padded to 4 bytes.
func withLength(body []byte) []byte {
	body = append(body, make([]byte, (4-len(body)%4)%4)...)
	b := le.AppendUint32(nil, uint32(len(body)))
	return append(b, body...)
}

// dwarfSections are .debug_abbrev and .debug_info (one compile unit,
// StubFile, over the stub, its lines at .debug_line offset 0) and line,
// the .debug_line.
func dwarfSections(line Section) []Section {
	return []Section{
		{Name: ".debug_abbrev", Type: elf.SHT_PROGBITS, Data: abbrevs},
		{Name: ".debug_info", Type: elf.SHT_PROGBITS, Data: infoUnit()},
		line,
	}
}

// abbrevs: 1 = DW_TAG_compile_unit, no children, DW_AT_name string,
// DW_AT_stmt_list sec_offset, DW_AT_low_pc addr, DW_AT_high_pc data8.
var abbrevs = []byte{1, 0x11, 0, 0x03, 0x08, 0x10, 0x17, 0x11, 0x01, 0x12, 0x07, 0, 0, 0}

func infoUnit() []byte {
	die := append([]byte{1}, StubFile+"\x00"...)
	die = le.AppendUint32(die, 0)
	die = le.AppendUint64(die, StubOff)
	die = le.AppendUint64(die, uint64(len(Stub)))
	unit := append([]byte{4, 0}, 0, 0, 0, 0, 8) // version 4, abbrevs at 0, 8-byte addresses
	unit = append(unit, die...)
	return append(le.AppendUint32(nil, uint32(len(unit))), unit...)
}

// debugLine is a version 4 line program: StubFile line 1 over the stub.
func debugLine() Section {
	hdr := []byte{1, 1, 1, 0xfb, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0}
	hdr = append(append(hdr, StubFile...), 0, 0, 0, 0, 0)
	prog := append([]byte{0, 9, 2}, le.AppendUint64(nil, StubOff)...)
	prog = append(prog, 1, 2, byte(len(Stub)), 0, 1, 1)
	unit := append([]byte{4, 0}, le.AppendUint32(nil, uint32(len(hdr)))...)
	unit = append(append(unit, hdr...), prog...)
	return Section{Name: ".debug_line", Type: elf.SHT_PROGBITS, Data: append(le.AppendUint32(nil, uint32(len(unit))), unit...)}
}

// compressed is an SHF_COMPRESSED section whose header says it inflates
// to size bytes, holding stream (a zlib stream).
func compressed(name string, size uint64, stream []byte) Section {
	hdr := make([]byte, 24)
	le.PutUint32(hdr, uint32(elf.COMPRESS_ZLIB))
	le.PutUint64(hdr[8:], size)
	le.PutUint64(hdr[16:], 1)
	return Section{Name: name, Type: elf.SHT_PROGBITS, Flags: elf.SHF_COMPRESSED, Data: append(hdr, stream...), Align: 8}
}

// Deflate returns a zlib stream of n zeros, read from cacheDir when an
// earlier call left it there (3 GiB take about 3 s to deflate).
func Deflate(cacheDir string, n int64) ([]byte, error) {
	cached := filepath.Join(cacheDir, fmt.Sprintf("zeros-%d.zlib", n))
	if b, err := os.ReadFile(cached); err == nil {
		return b, nil
	}
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(zeros)) {
		w.Write(zeros[:min(left, int64(len(zeros)))])
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if err := os.WriteFile(cached, z.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("cache deflated zeros: %w", err)
	}
	return z.Bytes(), nil
}
