package unwind

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime/debug"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// The budgets of one table: what building it may cost, whatever its file
// holds. The largest real tables here: librustc_driver's .eh_frame is
// 6.4 MB with 1.15M rows (15 MB allocated to build it); a function's FDE
// has up to a few hundred rows. A crafted 128 MB .eh_frame of one FDE
// with 32M rows took 3.57 GB to build before these.
var (
	// MaxCFIBytes bounds an .eh_frame or .debug_frame section read.
	MaxCFIBytes uint64 = 64 << 20
	// MaxRows bounds the rows of one table (4 bytes each in the table).
	MaxRows = 16 << 20
)

// maxFDERows bounds the rows of one FDE (24 bytes each while evaluated).
const maxFDERows = 1 << 16

// Segment is a PT_LOAD program header (internal/safeelf's, shared with
// resolver).
type Segment = safeelf.Segment

// BuildFile builds the table of the ELF file at path. Its CFI sections are
// mapped, not read onto the heap (sectionMapper): a fault because the
// file shrank meanwhile is an error, as a malformed file is.
func BuildFile(path string) (*Table, error) {
	src, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("unwind table: %w", err)
	}
	defer src.Close()
	return buildFrom(src)
}

// buildFrom builds the table of an opened file, reading only from it.
func buildFrom(src *safefile.File) (*Table, error) {
	path := src.Name
	f, err := safeelf.NewFile(path, src)
	if err != nil {
		return nil, fmt.Errorf("unwind table: %w", err)
	}
	m := &sectionMapper{src: src}
	defer m.unmap()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var t *Table
	// debug/elf reads sections lazily: buildELF can meet its panics too.
	err = safeelf.Guard(path, func() (e error) { t, e = buildELF(f, m.data); return e })
	if err != nil {
		return nil, fmt.Errorf("unwind table of %s: %w", path, err)
	}
	return t, nil
}

// BuildELF builds the table from an opened x86_64 ELF file: .eh_frame
// (located through PT_GNU_EH_FRAME when section headers are stripped) and
// .debug_frame (FDEs .eh_frame lacks).
func BuildELF(f *elf.File) (*Table, error) { return buildELF(f, readSection) }

// sectionData returns the contents of a section.
type sectionData func(*elf.Section) ([]byte, error)

func readSection(s *elf.Section) ([]byte, error) { return safeelf.SectionData("", s) }

func buildELF(f *elf.File, data sectionData) (*Table, error) {
	if f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("unsupported machine %v: only x86_64 unwind rules are evaluated", f.Machine)
	}
	var frames []*CFI
	for _, name := range []string{EhFrame, DebugFrame} {
		data, addr, err := frameSection(f, name, data)
		if err != nil {
			return nil, err
		}
		if data == nil {
			continue
		}
		fr, err := ParseCFI(name, data, bases(f, addr))
		if err != nil {
			return nil, err
		}
		frames = append(frames, fr)
	}
	if fr := entryFrames(f, frames); fr != nil {
		frames = append(frames, fr)
	}
	for _, synth := range []func(*elf.File, []*CFI, sectionData) *CFI{pltFrames, initFrames, crtFrames} {
		if fr := synth(f, frames, data); fr != nil {
			frames = append(frames, fr)
		}
	}
	fdes := sortFDEs(frames)
	if fr := symbolFrames(f, frames, fdes, data); fr != nil {
		fdes = fdes.with(fr)
	}
	// No CFI at all gives an empty table: the unwinder uses frame pointers.
	t, err := buildSorted(fdes)
	if err != nil {
		return nil, err
	}
	t.Loads = safeelf.Loads(f)
	return t, nil
}

func frameSection(f *elf.File, name string, read sectionData) ([]byte, uint64, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		if name == EhFrame {
			return ehFrameFromHeader(f)
		}
		return nil, 0, nil
	}
	if s.Size > MaxCFIBytes {
		return nil, 0, fmt.Errorf("%s of %s is %w of %s (unwind.MaxCFIBytes): no table", name, safeelf.Size(s.Size), safeelf.ErrBudget, safeelf.Size(MaxCFIBytes))
	}
	data, err := read(s)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", name, err)
	}
	return data, s.Addr, nil
}

// ehFrameFromHeader finds .eh_frame through PT_GNU_EH_FRAME (.eh_frame_hdr:
// version u8, eh_frame_ptr_enc u8, fde_count_enc u8, table_enc u8,
// eh_frame_ptr). The section runs to its terminator or the segment's end.
func ehFrameFromHeader(f *elf.File) ([]byte, uint64, error) {
	var hdr *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_GNU_EH_FRAME {
			hdr = p
		}
	}
	if hdr == nil {
		return nil, 0, nil
	}
	buf := make([]byte, min(hdr.Filesz, 64))
	if _, err := hdr.ReadAt(buf, 0); err != nil || len(buf) < 8 || buf[0] != 1 {
		return nil, 0, &FormatError{Section: ".eh_frame_hdr", Offset: 0, Msg: "unreadable or unknown version"}
	}
	r := &reader{buf: buf, pos: 4}
	ptr, err := readEncoded(r, buf[1], &Bases{Section: hdr.Vaddr}, 0, 8)
	if err != nil {
		return nil, 0, &FormatError{Section: ".eh_frame_hdr", Offset: 4, Msg: err.Error()}
	}
	seg, ok := safeelf.Find(safeelf.Loads(f), ptr)
	if !ok {
		return nil, 0, &FormatError{Section: ".eh_frame_hdr", Offset: 4, Msg: fmt.Sprintf("eh_frame_ptr %#x is in no PT_LOAD segment", ptr)}
	}
	data, err := safeelf.ReadVirt(f, "", ".eh_frame", ptr, min(seg.Vaddr+seg.Filesz-ptr, MaxCFIBytes))
	if err != nil {
		return nil, 0, fmt.Errorf("read .eh_frame at %#x: %w", ptr, err)
	}
	return data, ptr, nil
}

func bases(f *elf.File, addr uint64) Bases {
	b := Bases{Section: addr}
	if s := f.Section(".text"); s != nil {
		b.Text = s.Addr
	}
	if s := f.Section(".got"); s != nil {
		b.Data = s.Addr
	}
	b.Deref = func(a uint64) (uint64, bool) {
		var v [8]byte
		if err := safeelf.ReadAt(f, v[:], a); err != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint64(v[:]), true
	}
	return b
}
