package unwind

import (
	"debug/elf"
	"os"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
	"golang.org/x/sys/unix"
)

// sectionMapper maps the sections of one open ELF file read-only, for the
// time of one build: libLLVM-14's 5 MB .eh_frame read onto the heap costs
// a page fault per 4 KiB (1,300, a third of the time of parsing it), where
// a mapping of the page cache populated at once (MAP_POPULATE) costs one
// system call. Nothing built may keep a slice of a mapping: unmap releases
// them all. Compressed sections, and any a mapping fails for, are read.
type sectionMapper struct {
	src  *safefile.File
	maps [][]byte
}

// data maps s, or reads it (within the section budget) when it is
// compressed or not wholly in the file as it was opened.
func (m *sectionMapper) data(s *elf.Section) ([]byte, error) {
	size := uint64(m.src.Size)
	if s.Flags&elf.SHF_COMPRESSED != 0 || s.Size == 0 || s.Offset > size || s.Size > size-s.Offset || s.Size > safeelf.MaxSection {
		return safeelf.SectionData(m.src.Name, s) // says what is wrong, if anything
	}
	start := s.Offset &^ uint64(os.Getpagesize()-1)
	b, err := unix.Mmap(int(m.src.OS().Fd()), int64(start), int(s.Offset+s.Size-start), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return safeelf.SectionData(m.src.Name, s)
	}
	m.maps = append(m.maps, b)
	if testMapped != nil {
		testMapped(m.src.Name)
	}
	return b[s.Offset-start:], nil
}

// testMapped, set by tests, runs after each mapping (to shrink the file).
var testMapped func(path string)

func (m *sectionMapper) unmap() {
	for _, b := range m.maps {
		unix.Munmap(b)
	}
	m.maps = nil
}
