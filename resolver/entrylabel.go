package resolver

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// A stripped executable has no symbol at its entry point (779 of 823
// programs in Debian's /usr/bin), so every one of its samples started at
// "prog+0x5860" where a program with symbols starts at _start. The entry
// point is the C runtime's _start in every toolchain (glibc's and musl's
// crt1.o, Rust's and Go's C-linked programs); the FDE that covers it in
// .eh_frame (found through .eh_frame_hdr's sorted table, without parsing
// .eh_frame) gives its extent. So an executable's entry point without a
// function symbol gets the label _start (labels.go) over that FDE. An
// executable is an ET_EXEC file, one with a program interpreter, or an
// ET_DYN file that needs no library (ld.so, static-pie programs); a
// library's entry point (libc.so.6 prints its version) is not _start.

// maxEntryFDE bounds the entry code named _start (glibc's is 38 bytes).
const maxEntryFDE = 256

// entryLabel returns the _start label of the entry point of f, read as
// o; ok is false when f is no executable or no FDE covers the entry.
func entryLabel(f *elf.File, o *Object) (Symbol, bool) {
	exe := f.Type == elf.ET_EXEC || o.Interp != "" || (f.Type == elf.ET_DYN && len(o.Needed) == 0)
	if !exe || f.Entry == 0 || f.Machine != elf.EM_X86_64 {
		return Symbol{}, false
	}
	start, size, ok := fdeRange(f, f.Entry)
	if !ok || start != f.Entry {
		return Symbol{}, false
	}
	return Symbol{Name: "_start", Addr: start, Size: size}, true
}

// ehHeader is .eh_frame_hdr's header as GCC and LLVM write it: version 1,
// eh_frame_ptr pcrel sdata4, fde_count udata4, table datarel sdata4.
var ehHeader = [4]byte{1, 0x1b, 0x03, 0x3b}

// fdeRange returns the range of the FDE covering pc, from .eh_frame_hdr's
// table and the FDE's pc_range; ok is false for other encodings, malformed
// tables, or no such FDE. The table is searched where it lies (8 bytes an
// entry, ~20 reads), not read whole: node's is 600 KB.
func fdeRange(f *elf.File, pc uint64) (start, size uint64, ok bool) {
	hdr, eh := f.Section(".eh_frame_hdr"), f.Section(".eh_frame")
	if hdr == nil || eh == nil || hdr.Type == elf.SHT_NOBITS || eh.Type == elf.SHT_NOBITS || hdr.Size < 12 {
		return 0, 0, false
	}
	le := binary.LittleEndian
	var head [12]byte
	if _, err := hdr.ReadAt(head[:], 0); err != nil || [4]byte(head[:4]) != ehHeader {
		return 0, 0, false
	}
	n := uint64(le.Uint32(head[8:12]))
	if n == 0 || n > (hdr.Size-12)/8 {
		return 0, 0, false
	}
	bad := false
	at := func(i int, off int64) uint64 { // entry i's initial location (off 0) or FDE address (off 4)
		var w [4]byte
		if _, err := hdr.ReadAt(w[:], 12+8*int64(i)+off); err != nil {
			bad = true
		}
		return hdr.Addr + uint64(int64(int32(le.Uint32(w[:]))))
	}
	i := sort.Search(int(n), func(i int) bool { return at(i, 0) > pc }) - 1
	if i < 0 || bad {
		return 0, 0, false
	}
	start, fde := at(i, 0), at(i, 4)
	var rec [16]byte // length, CIE pointer, pc_begin (pcrel sdata4), pc_range
	if bad || fde < eh.Addr || eh.Size < 16 || fde-eh.Addr > eh.Size-16 {
		return 0, 0, false
	}
	if _, err := eh.ReadAt(rec[:], int64(fde-eh.Addr)); err != nil {
		return 0, 0, false
	}
	size = uint64(le.Uint32(rec[12:16]))
	begin := fde + 8 + uint64(int64(int32(le.Uint32(rec[8:12]))))
	if l := le.Uint32(rec[0:4]); l < 12 || l == 0xffffffff || begin != start || size == 0 || size > maxEntryFDE || pc-start >= size {
		return 0, 0, false
	}
	return start, size, true
}
