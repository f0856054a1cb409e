package diskcache

import "encoding/binary"

// reader is a bounds-checked little-endian cursor: a read past the end
// sets err and returns zeros, checked once at the end.
type reader struct {
	buf []byte
	pos int
	err bool
}

func (r *reader) left() int { return len(r.buf) - r.pos }

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(r.left()) {
		r.err, r.pos = true, len(r.buf)
		return nil
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
