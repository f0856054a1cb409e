// Package elfnote walks ELF notes: the GNU build-id note of an ELF file,
// for fileid (the identity that keys resolver's and unwind's per-file
// caches) and resolver (build-ids in listings and pprof), and the notes of
// a named section, for resolver/usdt (.note.stapsdt). It never panics on
// malformed notes.
package elfnote

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// maxNote bounds the note data read from one section or segment.
const maxNote = 1 << 16

// BuildID returns the hex NT_GNU_BUILD_ID of f, or "" when it has none:
// from the .note.gnu.build-id section, else from the PT_NOTE segments
// (stripped files may have no section headers).
func BuildID(f *elf.File) string {
	if s := f.Section(".note.gnu.build-id"); s != nil && s.Size <= maxNote {
		if b, err := s.Data(); err == nil {
			if id := Find(b, s.Addralign, f.ByteOrder); id != "" {
				return id
			}
		}
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > maxNote {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			continue
		}
		if id := Find(b, p.Align, f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// Find scans ELF notes for NT_GNU_BUILD_ID and returns its descriptor as
// hex, or "".
func Find(b []byte, align uint64, bo binary.ByteOrder) string {
	for _, n := range Notes(b, align, bo) {
		if n.Type == 3 && n.Name == "GNU" {
			return hex.EncodeToString(n.Desc)
		}
	}
	return ""
}

// Note is one ELF note.
type Note struct {
	Name string // the owner, without its terminating NULs ("GNU", "stapsdt")
	Type uint32
	Desc []byte // the descriptor, a slice of the walked data
}

// Notes walks the ELF notes in b (namesz, descsz, type, name, desc; name
// and desc padded to 4 bytes, or 8 in 8-aligned note data) and returns
// them in order, up to the first one that runs past the end of b.
func Notes(b []byte, align uint64, bo binary.ByteOrder) []Note {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	var out []Note
	for uint64(len(b)) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		nameEnd := 12 + up(namesz)
		descEnd := nameEnd + up(descsz)
		if descEnd > uint64(len(b)) {
			break
		}
		name := string(bytes.TrimRight(b[12:12+namesz], "\x00"))
		out = append(out, Note{Name: name, Type: typ, Desc: b[nameEnd : nameEnd+descsz : nameEnd+descsz]})
		b = b[descEnd:]
	}
	return out
}

// SectionNotes returns the notes of f's section name (nil when f has no
// such section), refusing a section larger than max bytes.
func SectionNotes(f *elf.File, name string, max uint64) ([]Note, error) {
	s := f.Section(name)
	if s == nil {
		return nil, nil
	}
	if s.Type != elf.SHT_NOTE {
		return nil, fmt.Errorf("section %s is of type %v, not SHT_NOTE", name, s.Type)
	}
	if s.Size > max {
		return nil, fmt.Errorf("section %s is %d bytes, more than the %d read", name, s.Size, max)
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("read section %s: %w", name, err)
	}
	return Notes(b, s.Addralign, f.ByteOrder), nil
}
