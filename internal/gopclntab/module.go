package gopclntab

import (
	"debug/elf"

	"github.com/probee/probee/internal/safeelf"
)

// Magic numbers of the tables whose functions are offsets from the text
// start (Go 1.18-1.19, 1.20 on), and of older ones, which hold absolute
// addresses (Go 1.2-1.15, 1.16-1.17).
const (
	magic118 = 0xfffffff0
	magic120 = 0xfffffff1
	magic12  = 0xfffffffb
	magic116 = 0xfffffffa
)

// module is what the runtime's module data adds to the table: the text
// start its function offsets count from, and the words that may be the
// base of the functions' data (go:func.*), which their inline trees are
// offsets from: its place moves between Go versions (320 bytes in 1.20 to
// 1.26, 344 in 1.27), so Table.findGofunc picks the one whose trees read.
type module struct {
	text  uint64
	after []uint64 // the words after text, up to modWords of them
}

// findModule returns the module data of the table at pclnAddr (its bytes:
// data), else a module whose text is the start of .text (0 without one).
func findModule(f *elf.File, pclnAddr uint64, data []byte) module {
	var m module
	if s := f.Section(".text"); s != nil {
		m.text = s.Addr
	}
	if len(data) < 8 || f.Class != elf.ELFCLASS64 {
		return m
	}
	if magic := f.ByteOrder.Uint32(data); magic != magic118 && magic != magic120 {
		return m
	}
	for _, name := range []string{".go.module", ".noptrdata"} {
		if at, ok := moduleIn(f, f.Section(name), pclnAddr, uint64(len(data))); ok {
			return at
		}
	}
	return m
}

// Offsets in the module data (64-bit): pcHeader, then the six slices
// funcnametab, cutab, filetab, pctab, pclntable and ftab (24 bytes each),
// findfunctab, minpc, maxpc, text: the same from Go 1.18 to 1.27. Then
// addresses (etext, noptrdata, ..., rodata, gofunc): modWords are kept.
const (
	modFuncnametab = 8
	modMinPC       = 160
	modText        = 176
	modSize        = modText + 8
	modWords       = 32
)

// moduleIn finds in section s the module data of the table at pclnAddr
// (n bytes long): its pcHeader is the table, its funcnametab lies in the
// table, its minpc (the first function's entry) equals its text, which an
// executable segment holds.
func moduleIn(f *elf.File, s *elf.Section, pclnAddr, n uint64) (module, bool) {
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size > 64<<20 {
		return module{}, false
	}
	b, err := s.Data()
	if err != nil {
		return module{}, false
	}
	word := func(off int) uint64 { return f.ByteOrder.Uint64(b[off:]) }
	loads := safeelf.Loads(f)
	for off := 0; off+modSize <= len(b); off += 8 {
		if word(off) != pclnAddr {
			continue
		}
		names, text := word(off+modFuncnametab), word(off+modText)
		if names < pclnAddr || names-pclnAddr >= n || word(off+modMinPC) != text {
			continue
		}
		if seg, ok := safeelf.Find(loads, text); !ok || !seg.Exec() {
			continue
		}
		m := module{text: text}
		for at := off + modSize; at+8 <= len(b) && len(m.after) < modWords; at += 8 {
			m.after = append(m.after, word(at))
		}
		return m, true
	}
	return module{}, false
}
