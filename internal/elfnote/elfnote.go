// Package elfnote reads the GNU build-id note of an ELF file, for fileid
// (the identity that keys resolver's and unwind's per-file caches) and
// resolver (build-ids in listings and pprof). It never panics on malformed
// notes.
package elfnote

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
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

// Find scans ELF notes (namesz, descsz, type, name, desc; name and desc
// padded to 4 bytes, or 8 in 8-aligned note data) for NT_GNU_BUILD_ID and
// returns its descriptor as hex, or "".
func Find(b []byte, align uint64, bo binary.ByteOrder) string {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	for uint64(len(b)) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(b)), uint64(bo.Uint32(b[4:])), bo.Uint32(b[8:])
		nameEnd := 12 + up(namesz)
		descEnd := nameEnd + up(descsz)
		if descEnd > uint64(len(b)) {
			return ""
		}
		if typ == 3 && (namesz == 3 || namesz == 4) && string(b[12:15]) == "GNU" {
			return hex.EncodeToString(b[nameEnd : nameEnd+descsz])
		}
		b = b[descEnd:]
	}
	return ""
}
