package safeelf

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The budgets of one ELF file: what reading it may cost in memory, whatever
// its headers claim. A header's size is only a claim (a PT_LOAD of 1 TiB in
// a 16 KB file, a zlib section that inflates to 3 GiB, a sparse file of
// 4 GiB of zeros), and Go's out-of-memory is a fatal error no recover
// catches: a size is checked against these before anything is allocated.
var (
	// MaxSection is the most bytes of one section or segment read into
	// memory, after decompression. The largest read of real programs here
	// is libLLVM's .text (73 MB); debug files of big C++ programs reach a
	// few hundred MB of .debug_info.
	MaxSection uint64 = 1 << 30
	// MaxDWARF is the most bytes of all of a file's .debug_* sections
	// (debug/dwarf holds them all at once).
	MaxDWARF uint64 = 2 << 30
	// MaxDebugSections is the most .debug_* section headers of a file
	// whose DWARF is read: debug/elf walks all the headers once per DWARF
	// section of a shared object (65,535 junk headers took 100 s). Real
	// files have a dozen or two.
	MaxDebugSections = 256
)

// ErrBudget is wrapped by the errors of a read past a budget.
var ErrBudget = errors.New("past its budget")

// budgetError says what of which file is past which budget.
func budgetError(name, what string, size, limit uint64) error {
	err := fmt.Errorf("%s of %s is %w of %s: skipped", what, Size(size), ErrBudget, Size(limit))
	if name != "" {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return err
}

// Size prints a byte count the way the budgets are given: "1 GiB",
// "1.5 MiB", "300 bytes".
func Size(n uint64) string {
	for _, u := range []struct {
		unit string
		size uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		switch {
		case n < u.size:
			continue
		case n%u.size == 0:
			return fmt.Sprintf("%d %s", n/u.size, u.unit)
		}
		return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.unit)
	}
	return fmt.Sprintf("%d bytes", n)
}

// SectionData returns the contents of s of the file name, after checking
// its size (after decompression) against MaxSection.
func SectionData(name string, s *elf.Section) ([]byte, error) {
	if s.Size > MaxSection {
		return nil, budgetError(name, "section "+s.Name, s.Size, MaxSection)
	}
	return s.Data() // reads in chunks: a claim past the file's end costs what the file holds
}

// ReadVirt reads n bytes at the virtual address addr of f, from the
// PT_LOAD segment that holds them, for what (the name of what is read, for
// errors). n is checked against MaxSection first, and the bytes are read
// in chunks, so a segment that claims more than its file holds costs
// memory only up to the file's end.
func ReadVirt(f *elf.File, name, what string, addr, n uint64) ([]byte, error) {
	if n > MaxSection {
		return nil, budgetError(name, what, n, MaxSection)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && segmentOf(p).Holds(addr, n) {
			return readChunked(p, int64(addr-p.Vaddr), int64(n))
		}
	}
	return nil, fmt.Errorf("%s: %d bytes of %s at %#x are in no PT_LOAD segment", name, n, what, addr)
}

// ReadSection reads n bytes at offset off of section s (uncompressed),
// checking n against MaxSection and reading in chunks (see ReadVirt).
func ReadSection(name string, s *elf.Section, off, n uint64) ([]byte, error) {
	if n > MaxSection {
		return nil, budgetError(name, "section "+s.Name, n, MaxSection)
	}
	if s.Type == elf.SHT_NOBITS || off > s.Size || n > s.Size-off {
		return nil, fmt.Errorf("%d bytes at offset %#x of section %s are not in it", n, off, s.Name)
	}
	return readChunked(s, int64(off), int64(n))
}

// chunk is how much readChunked allocates ahead of what it has read.
const chunk = 1 << 20

// readChunked reads n bytes at off of r, growing the buffer as bytes
// arrive: an n larger than what r holds fails at r's end, having
// allocated at most one chunk more than r held.
func readChunked(r io.ReaderAt, off, n int64) ([]byte, error) {
	var b []byte
	for int64(len(b)) < n {
		next := min(n-int64(len(b)), chunk)
		b = append(b, make([]byte, next)...)
		got, err := r.ReadAt(b[int64(len(b))-next:], off+int64(len(b))-next)
		if int64(got) < next {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return b, nil
}

// DWARF returns f's DWARF data after checking the budgets: the number of
// .debug_* sections (MaxDebugSections) and their size, each (MaxSection)
// and all together (MaxDWARF).
func DWARF(name string, f *elf.File) (*dwarf.Data, error) {
	var total uint64
	n := 0
	for _, s := range f.Sections {
		if !isDebug(s.Name) || s.Type == elf.SHT_NOBITS {
			continue
		}
		if n++; n > MaxDebugSections {
			return nil, fmt.Errorf("%s: more than %d .debug_* sections are %w: its DWARF is not read", name, MaxDebugSections, ErrBudget)
		}
		if s.Size > MaxSection {
			return nil, budgetError(name, "section "+s.Name, s.Size, MaxSection)
		}
		total += s.Size
	}
	if total > MaxDWARF {
		return nil, budgetError(name, "DWARF", total, MaxDWARF)
	}
	var d *dwarf.Data
	err := Guard(name, func() (e error) { d, e = f.DWARF(); return e })
	return d, err
}

func isDebug(name string) bool {
	return strings.HasPrefix(name, ".debug_") || strings.HasPrefix(name, ".zdebug_")
}
