// Package gopclntab reads the functions of a Go binary from its
// .gopclntab, the table the Go runtime keeps for its own tracebacks, which
// even a stripped binary (-ldflags=-s) holds: for the frame names and
// probe targets of a binary without .symtab (resolver), and for the
// runtime functions the unwinder decodes (unwind).
//
// debug/gosym parses the table. Written here is only what it leaves to its
// caller: since Go 1.18 the table gives functions as offsets from the
// runtime's text start (runtime.text), which is .text's start only when Go
// linked the binary itself. Where the system linker did (cgo,
// -linkmode=external), C start-up code comes first, and counting from
// .text put every function 0x100 bytes early on this machine's builds. The
// start is read from the runtime's module data (runtime.firstmoduledata,
// in .go.module from Go 1.26, .noptrdata before), found by its first
// words, which point at the table.
package gopclntab

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"

	"github.com/probee/probee/internal/safeelf"
)

// Func is one function of the table.
type Func struct {
	Name       string
	Entry, End uint64 // [Entry, End): ELF virtual addresses
}

// ErrNoTable means the file has no .gopclntab (not a Go binary, or one
// whose table is in a section without that name, as on some platforms).
var ErrNoTable = errors.New("no .gopclntab")

// Funcs returns the functions of Go binary f, by the table's order
// (ascending entries), those with an empty range left out.
func Funcs(f *elf.File) ([]Func, error) {
	pcln := f.Section(".gopclntab")
	if pcln == nil || pcln.Type == elf.SHT_NOBITS {
		return nil, ErrNoTable
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, fmt.Errorf("read .gopclntab: %w", err)
	}
	if err := checkCount(f, data); err != nil {
		return nil, err
	}
	var tab *gosym.Table
	err = safeelf.Guard(".gopclntab", func() (err error) {
		tab, err = gosym.NewTable(nil, gosym.NewLineTable(data, textStart(f, pcln.Addr, data)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read .gopclntab: %w", err)
	}
	out := make([]Func, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		if fn.End > fn.Entry && fn.Name != "" {
			out = append(out, Func{Name: fn.Name, Entry: fn.Entry, End: fn.End})
		}
	}
	return out, nil
}

// checkCount refuses a table whose function count cannot fit in it (each
// entry of the function table takes at least 8 bytes): debug/gosym
// allocates the count's functions before it reads one, and a corrupt count
// ran the process out of memory, which no recover catches.
func checkCount(f *elf.File, data []byte) error {
	if len(data) < 16 {
		return fmt.Errorf("read .gopclntab: %d bytes, too short for its header", len(data))
	}
	n := f.ByteOrder.Uint64(data[8:])
	if data[7] == 4 { // pointer size
		n = uint64(f.ByteOrder.Uint32(data[8:]))
	}
	if n > uint64(len(data))/8 {
		return fmt.Errorf("read .gopclntab: %d functions do not fit in its %d bytes", n, len(data))
	}
	return nil
}

// Magic numbers of the tables whose functions are offsets from the text
// start (Go 1.18-1.19, 1.20 on); older tables hold absolute addresses.
const (
	magic118 = 0xfffffff0
	magic120 = 0xfffffff1
)

// textStart returns the address the table at pclnAddr (its bytes: data)
// counts function offsets from: the text field of the module data that
// points at the table, else the start of .text (0 without one).
func textStart(f *elf.File, pclnAddr uint64, data []byte) uint64 {
	var text uint64
	if s := f.Section(".text"); s != nil {
		text = s.Addr
	}
	if len(data) < 8 || f.Class != elf.ELFCLASS64 {
		return text
	}
	if m := f.ByteOrder.Uint32(data); m != magic118 && m != magic120 {
		return text
	}
	for _, name := range []string{".go.module", ".noptrdata"} {
		if at, ok := moduleText(f, f.Section(name), pclnAddr, uint64(len(data))); ok {
			return at
		}
	}
	return text
}

// Offsets in the module data (64-bit): pcHeader, then the six slices
// funcnametab, cutab, filetab, pctab, pclntable and ftab (24 bytes each),
// findfunctab, minpc, maxpc, text: the same from Go 1.18 to 1.26.
const (
	modFuncnametab = 8
	modMinPC       = 160
	modText        = 176
	modSize        = modText + 8
)

// moduleText finds in section s the module data of the table at pclnAddr
// (n bytes long): its pcHeader is the table, its funcnametab lies in the
// table, its minpc (the first function's entry) equals its text, which an
// executable segment holds. It returns that text.
func moduleText(f *elf.File, s *elf.Section, pclnAddr, n uint64) (uint64, bool) {
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size > 64<<20 {
		return 0, false
	}
	b, err := s.Data()
	if err != nil {
		return 0, false
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
		if seg, ok := safeelf.Find(loads, text); ok && seg.Exec() {
			return text, true
		}
	}
	return 0, false
}
