// Package safeelf owns how probee reads ELF files with debug/elf: the one
// panic-to-error guard around debug/elf and debug/dwarf (they have panicked
// on hostile input), opening files behind it with clear errors for what
// probee cannot trace (not ELF, truncated, 32-bit, big-endian), the
// PT_LOAD segment type with its address and file offset arithmetic
// (segment.go), and the records of symbol tables (sym.go). resolver and unwind open ELF files only through it. (Test
// oracles such as internal/gdbsnap use debug/elf directly, on purpose: an
// oracle shares no code with what it checks.)
package safeelf

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/probee/probee/internal/safefile"
)

// ErrNotELF is returned for files that are not ELF objects (linker
// scripts such as libc.so, text files): callers skip them.
var ErrNotELF = errors.New("not an ELF file")

// Guard runs fn, turning a panic inside debug/elf or debug/dwarf on hostile
// input into an error naming name (a path, or what is being read).
func Guard(name string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed ELF file %s: %v", name, r)
		}
	}()
	return fn()
}

// File is an ELF file opened by Open; Close closes the file under it.
type File struct {
	*elf.File
	Src *safefile.File // the opened file: its identity, size and descriptor
}

// Close closes the underlying file.
func (f *File) Close() error { return f.Src.Close() }

// Open opens the ELF file at path through internal/safefile (no blocking,
// regular files only, inside a process's root for /proc/PID/root paths;
// reads never past the file's size) and NewFile. Errors name path.
func Open(path string) (*File, error) {
	src, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	return FromFile(src)
}

// FromFile reads the ELF headers of an opened file; on error it closes
// src.
func FromFile(src *safefile.File) (*File, error) {
	f, err := NewFile(src.Name, src)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &File{File: f, Src: src}, nil
}

// NewFile reads the ELF headers from r behind Guard. Files that are not
// ELF fail with ErrNotELF; truncated files, 32-bit and big-endian ones get
// an error saying so. Errors name name.
func NewFile(name string, r io.ReaderAt) (*elf.File, error) {
	var ident [elf.EI_NIDENT]byte
	if _, err := r.ReadAt(ident[:4], 0); err != nil || string(ident[:4]) != elf.ELFMAG {
		return nil, fmt.Errorf("%s: %w", name, ErrNotELF)
	}
	if n, _ := r.ReadAt(ident[:], 0); n < len(ident) {
		return nil, truncated(name)
	}
	if err := checkIdent(name, ident); err != nil {
		return nil, err
	}
	var f *elf.File
	err := Guard(name, func() (e error) { f, e = elf.NewFile(r); return e })
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, truncated(name)
	case err != nil:
		return nil, fmt.Errorf("read ELF %s: %w", name, err)
	}
	return f, nil
}

func truncated(name string) error {
	return fmt.Errorf("read ELF %s: file is truncated or corrupt (it ends before a header says): rebuild or copy it again", name)
}

// checkIdent rejects the ELF classes and byte orders probee cannot trace
// (uprobes and stacks here are 64-bit little-endian) with a clear message,
// before debug/elf reports them as odd field values.
func checkIdent(name string, ident [elf.EI_NIDENT]byte) error {
	class, data := elf.Class(ident[elf.EI_CLASS]), elf.Data(ident[elf.EI_DATA])
	switch {
	case class == elf.ELFCLASS32:
		return fmt.Errorf("%s: 32-bit ELF file (ELFCLASS32): probee traces 64-bit binaries only", name)
	case class != elf.ELFCLASS64:
		return fmt.Errorf("%s: corrupt ELF header: unknown class %d", name, ident[elf.EI_CLASS])
	case data == elf.ELFDATA2MSB:
		return fmt.Errorf("%s: big-endian ELF file (ELFDATA2MSB): probee traces little-endian binaries only", name)
	case data != elf.ELFDATA2LSB:
		return fmt.Errorf("%s: corrupt ELF header: unknown byte order %d", name, ident[elf.EI_DATA])
	}
	return nil
}
