package safeelf

import (
	"debug/elf"
	"fmt"
)

// Segment is one PT_LOAD program header: file bytes [Offset, Offset+Filesz)
// are mapped at virtual addresses [Vaddr, Vaddr+Filesz), and the segment
// takes Memsz bytes of memory (the rest zero-filled).
type Segment struct {
	Vaddr, Offset, Filesz, Memsz uint64
	Flags                        elf.ProgFlag
}

// Loads lists f's PT_LOAD segments in program header order.
func Loads(f *elf.File) []Segment {
	var out []Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			out = append(out, segmentOf(p))
		}
	}
	return out
}

func segmentOf(p *elf.Prog) Segment {
	return Segment{Vaddr: p.Vaddr, Offset: p.Off, Filesz: p.Filesz, Memsz: p.Memsz, Flags: p.Flags}
}

// Exec reports whether the segment is executable (PF_X).
func (s Segment) Exec() bool { return s.Flags&elf.PF_X != 0 }

// Holds reports whether the file-backed part of s holds all n bytes at the
// virtual address addr (n is at least 1).
func (s Segment) Holds(addr, n uint64) bool {
	return addr >= s.Vaddr && addr-s.Vaddr < s.Filesz && n <= s.Filesz-(addr-s.Vaddr)
}

// FileOffset is the file offset of the virtual address addr of s.
func (s Segment) FileOffset(addr uint64) uint64 { return addr - s.Vaddr + s.Offset }

// VirtAddr is the virtual address of the file offset off of s.
func (s Segment) VirtAddr(off uint64) uint64 { return off - s.Offset + s.Vaddr }

// Find returns the first segment whose file-backed part holds the virtual
// address addr.
func Find(loads []Segment, addr uint64) (Segment, bool) {
	for _, s := range loads {
		if s.Holds(addr, 1) {
			return s, true
		}
	}
	return Segment{}, false
}

// FindOffset returns the first segment whose file bytes hold the file
// offset off.
func FindOffset(loads []Segment, off uint64) (Segment, bool) {
	for _, s := range loads {
		if off >= s.Offset && off-s.Offset < s.Filesz {
			return s, true
		}
	}
	return Segment{}, false
}

// ReadAt reads len(b) bytes at the virtual address addr of f from the
// PT_LOAD segment whose file-backed part holds them all.
func ReadAt(f *elf.File, b []byte, addr uint64) error {
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && segmentOf(p).Holds(addr, uint64(len(b))) {
			_, err := p.ReadAt(b, int64(addr-p.Vaddr))
			return err
		}
	}
	return fmt.Errorf("%d bytes at %#x are in no PT_LOAD segment", len(b), addr)
}
