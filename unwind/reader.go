package unwind

import "encoding/binary"

// reader is a bounds-checked little-endian cursor over one CFI record. A read
// past the end sets err and returns zero; callers check err once per record,
// which keeps the decoding code free of per-field error plumbing.
type reader struct {
	buf []byte
	pos int
	err bool
}

func (r *reader) left() int { return len(r.buf) - r.pos }

func (r *reader) fail() uint64 {
	r.err = true
	r.pos = len(r.buf)
	return 0
}

func (r *reader) u8() uint8 {
	if r.pos >= len(r.buf) {
		r.fail()
		return 0
	}
	v := r.buf[r.pos]
	r.pos++
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(r.left()) {
		r.fail()
		return nil
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if r.pos >= len(r.buf) {
			return r.fail()
		}
		b := r.buf[r.pos]
		r.pos++
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var b byte
	shift := uint(0)
	for {
		if r.pos >= len(r.buf) {
			r.fail()
			return 0
		}
		b = r.buf[r.pos]
		r.pos++
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			break
		}
	}
	if shift < 64 && b&0x40 != 0 {
		v |= -1 << shift
	}
	return v
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() string {
	for i := r.pos; i < len(r.buf); i++ {
		if r.buf[i] == 0 {
			s := string(r.buf[r.pos:i])
			r.pos = i + 1
			return s
		}
	}
	r.fail()
	return ""
}
