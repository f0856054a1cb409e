package hostile

import (
	"debug/elf"
	"path/filepath"
)

// StubName is the symbol of the stub in the images that name it.
const StubName = "hostile_stub"

// ehFrameHdrOff and ehFrameOff are where HugeFilesz keeps .eh_frame_hdr
// and the .eh_frame it points to.
const (
	ehFrameHdrOff = 0x2000
	ehFrameOff    = 0x2100
)

// HugeFilesz writes huge-filesz.so (case 1): 16 KiB, no section headers;
// its PT_LOAD says p_filesz = p_memsz = 1 TiB, and PT_GNU_EH_FRAME's
// .eh_frame_hdr points to an .eh_frame inside it, so a reader that sizes
// .eh_frame by the segment's end allocates 1 TiB (probee before the
// budgets: fatal out-of-memory, exit 2, every output lost).
func HugeFilesz(dir string) (string, error) { return hugeFilesz(dir, "huge-filesz.so", false) }

// HugeFileszPreload writes huge-filesz-preload.so: HugeFilesz's file with
// a PT_DYNAMIC (an empty symbol and string table), which is all ld.so
// needs to load it: LD_PRELOAD=huge-filesz-preload.so maps it (1 TiB of
// address space) into any dynamic program (case 1 "via LD_PRELOAD and as
// a traced command").
func HugeFileszPreload(dir string) (string, error) {
	return hugeFilesz(dir, "huge-filesz-preload.so", true)
}

// dynamicOff is where HugeFileszPreload keeps its dynamic section, then
// its string table (dynamicOff+0x100) and symbol table (+0x200).
const dynamicOff = 0x3000

func hugeFilesz(dir, name string, dynamic bool) (string, error) {
	hdr := []byte{1, 0x1b, 0xff, 0xff, 0, 0, 0, 0} // version, pcrel|sdata4, no table
	le.PutUint32(hdr[4:], uint32(ehFrameOff-(ehFrameHdrOff+4)))
	im := Image{MinSize: 16 << 10, Progs: []Prog{
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Filesz: 1 << 40, Memsz: 1 << 40},
		{Type: elf.PT_GNU_EH_FRAME, Flags: elf.PF_R, Off: ehFrameHdrOff, Vaddr: ehFrameHdrOff, Filesz: uint64(len(hdr)), Memsz: uint64(len(hdr))},
	}}
	var dyn []byte
	if dynamic {
		for _, e := range [][2]uint64{
			{uint64(elf.DT_STRTAB), dynamicOff + 0x100}, {uint64(elf.DT_SYMTAB), dynamicOff + 0x200},
			{uint64(elf.DT_STRSZ), 1}, {uint64(elf.DT_SYMENT), 24}, {uint64(elf.DT_NULL), 0},
		} {
			dyn = le.AppendUint64(le.AppendUint64(dyn, e[0]), e[1])
		}
		im.Progs = append(im.Progs, Prog{Type: elf.PT_DYNAMIC, Flags: elf.PF_R, Off: dynamicOff, Vaddr: dynamicOff,
			Filesz: uint64(len(dyn)), Memsz: uint64(len(dyn))})
	}
	b, size := im.Bytes()
	b = append(b, make([]byte, size-int64(len(b)))...)
	copy(b[ehFrameHdrOff:], hdr)
	copy(b[ehFrameOff:], cie())
	copy(b[dynamicOff:], dyn)
	return writeFile(dir, name, b)
}

// Plain writes name: a small image with the stub named StubName and no
// attack of its own (case 3 swaps it with a FIFO).
func Plain(dir, name string) (string, error) {
	im := Image{Progs: []Prog{loadAll}, Sections: stubSections(StubName)}
	return write(dir, name, &im)
}

// Bomb is a zlib stream of BombSize zeros, as DWARFBomb's sections hold
// it (make it once with Deflate: about 3 s and 4 MB).
const BombSize = 3 << 30

// DWARFBomb writes dwarf-bomb.so (case 4): about 8 MB, the stub, a small
// .debug_info, and .debug_line and .debug_str compressed (SHF_COMPRESSED,
// zlib) that inflate to 3 GiB each. zlibZeros is Deflate(BombSize).
func DWARFBomb(dir string, zlibZeros []byte) (string, error) {
	secs := append(stubSections(StubName), dwarfSections(compressed(".debug_line", BombSize, zlibZeros))...)
	secs = append(secs, compressed(".debug_str", BombSize, zlibZeros))
	im := Image{Progs: []Prog{loadAll}, Sections: secs}
	return write(dir, "dwarf-bomb.so", &im)
}

// SparseSize is the size of SparseDebugLine's .debug_line.
const SparseSize = 4 << 30

// SparseDebugLine writes sparse-debug-line.so (case 4): the stub, a small
// .debug_info, and a .debug_line of 4 GiB, all of it a hole of the file.
func SparseDebugLine(dir string) (string, error) {
	line := Section{Name: ".debug_line", Type: elf.SHT_PROGBITS, Off: 1 << 20, Size: SparseSize}
	im := Image{Progs: []Prog{loadAll}, Sections: append(stubSections(StubName), dwarfSections(line)...)}
	return write(dir, "sparse-debug-line.so", &im)
}

// manyRowsAt is the offset and address of ManyRows's .eh_frame.
const manyRowsAt = 0x10000

// ManyRowsCount is the number of rows ManyRows's FDE makes.
const ManyRowsCount = 32 << 20

// ManyRows writes many-rows.so (case 5): the stub, and an .eh_frame of
// 96 MiB holding one CIE and one FDE over the stub whose instructions are
// DW_CFA_advance_loc(1), DW_CFA_def_cfa_offset(16 or 24) repeated
// ManyRowsCount times: 32M rows of one table (3.57 GB and 48 s to build
// before the budgets).
func ManyRows(dir string) (string, error) {
	insns := make([]byte, 3*ManyRowsCount)
	for i := range ManyRowsCount {
		insns[3*i], insns[3*i+1], insns[3*i+2] = 0x41, 0x0e, byte(16+8*(i&1))
	}
	c := cie()
	frame := append(c, fde(manyRowsAt, len(c), StubOff, ManyRowsCount+1, insns)...)
	eh := Section{Name: ".eh_frame", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addr: manyRowsAt, Off: manyRowsAt, Data: frame, Align: 8}
	im := Image{Progs: []Prog{loadAll}, Sections: append(stubSections(StubName), eh)}
	return write(dir, "many-rows.so", &im)
}

// JunkCount is the number of section headers JunkSections has.
const JunkCount = 65535

// JunkSections writes junk-sections.so (case 5): the stub, a small
// .debug_info and .debug_line, and .debug_junk headers up to 65,535
// section headers (extended numbering), all of one byte: debug/elf's
// DWARF walks every header for each of them (3.6 s for this file here;
// the tester's file took 1:48 to 2:41 for a 3 s run). .debug_types
// headers of one byte would end debug/elf's walk at the first.
func JunkSections(dir string) (string, error) {
	secs := append(stubSections(StubName), dwarfSections(debugLine())...)
	for len(secs)+2 < JunkCount {
		secs = append(secs, Section{Name: ".debug_junk", Type: elf.SHT_PROGBITS, Off: StubOff, Size: 1})
	}
	im := Image{Progs: []Prog{loadAll}, Sections: secs}
	return write(dir, "junk-sections.so", &im)
}

func write(dir, name string, im *Image) (string, error) {
	p := filepath.Join(dir, name)
	return p, im.Write(p)
}
