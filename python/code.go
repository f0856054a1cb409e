package python

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// A traced process's code objects are read from its memory (m, such as
// /proc/PID/mem) by address: a frame walk hands over a code object's
// address and the instruction it ran, and the names and the line come
// from here. Every read is bounded: a name by MaxName, a line table by
// MaxLineTable; a process that lies about a length gets a truncated name
// or no line, never a big read.

// MaxName bounds the characters of a name or a file name read.
const MaxName = 1024

// MaxLineTable bounds the bytes of a line table read.
const MaxLineTable = 64 << 10

// Code is what a code object says of itself.
type Code struct {
	Name      string // co_qualname (3.11+), else co_name
	File      string // co_filename
	FirstLine int    // co_firstlineno
	lines     []byte // co_lnotab (3.8, 3.9) or co_linetable
	v         Version
}

// ReadCode reads the code object at addr in m.
func (l *Layout) ReadCode(m io.ReaderAt, addr uint64) (*Code, error) {
	var hdr [4]byte
	name := l.CodeName
	if l.CodeQualname != 0 {
		name = l.CodeQualname
	}
	var p [3]uint64 // name, file, line table
	for i, off := range []uint64{name, l.CodeFilename, l.CodeLineTable} {
		var err error
		if p[i], err = readPtr(m, addr+off); err != nil {
			return nil, fmt.Errorf("code object at %#x: %w", addr, err)
		}
	}
	if err := readFull(m, hdr[:], addr+l.CodeFirstLine); err != nil {
		return nil, fmt.Errorf("code object at %#x: %w", addr, err)
	}
	c := &Code{FirstLine: int(int32(binary.LittleEndian.Uint32(hdr[:]))), v: l.Version}
	var err error
	if c.Name, err = l.ReadStr(m, p[0]); err != nil {
		return nil, fmt.Errorf("code object at %#x: name: %w", addr, err)
	}
	if c.File, err = l.ReadStr(m, p[1]); err != nil {
		return nil, fmt.Errorf("code object at %#x: file: %w", addr, err)
	}
	c.lines, _ = l.readBytes(m, p[2], MaxLineTable) // no line table: no lines
	return c, nil
}

// errNotCompact is returned for a str whose characters are not inline.
var errNotCompact = errors.New("not a compact str")

// ReadStr reads the str object at addr: its first MaxName characters.
func (l *Layout) ReadStr(m io.ReaderAt, addr uint64) (string, error) {
	n, err := readPtr(m, addr+l.StrLength)
	if err != nil {
		return "", err
	}
	var hdr [4]byte
	if err := readFull(m, hdr[:], addr+l.StrState); err != nil {
		return "", err
	}
	state := binary.LittleEndian.Uint32(hdr[:])
	kind, compact, ascii := state>>2&7, state>>5&1 == 1, state>>6&1 == 1
	if !compact {
		return "", errNotCompact
	}
	n = min(n, MaxName)
	if ascii {
		b := make([]byte, n)
		if err := readFull(m, b, addr+l.StrASCIIData); err != nil {
			return "", err
		}
		return string(b), nil
	}
	if kind != 1 && kind != 2 && kind != 4 {
		return "", fmt.Errorf("a str of kind %d", kind)
	}
	b := make([]byte, n*uint64(kind))
	if err := readFull(m, b, addr+l.StrCompactData); err != nil {
		return "", err
	}
	return decodeKind(b, int(kind)), nil
}

// decodeKind decodes the characters of a str of kind 1 (Latin-1), 2
// (UCS-2) or 4 (UCS-4).
func decodeKind(b []byte, kind int) string {
	out := make([]byte, 0, len(b))
	for i := 0; i+kind <= len(b); i += kind {
		var r rune
		switch kind {
		case 1:
			r = rune(b[i])
		case 2:
			r = rune(binary.LittleEndian.Uint16(b[i:]))
		default:
			r = rune(binary.LittleEndian.Uint32(b[i:]))
		}
		out = utf8.AppendRune(out, r) // an invalid one becomes U+FFFD
	}
	return string(out)
}

// readBytes reads the bytes object at addr: its first max bytes.
func (l *Layout) readBytes(m io.ReaderAt, addr uint64, max uint64) ([]byte, error) {
	n, err := readPtr(m, addr+l.BytesSize)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("a bytes object of %d bytes, past %d", n, max)
	}
	b := make([]byte, n)
	return b, readFull(m, b, addr+l.BytesData)
}

// readFull reads len(b) bytes at addr.
func readFull(m io.ReaderAt, b []byte, addr uint64) error {
	if addr > 1<<63-1-uint64(len(b)) {
		return fmt.Errorf("address %#x out of range", addr)
	}
	n, err := m.ReadAt(b, int64(addr))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %d bytes at %#x: %w", len(b), addr, err)
}
