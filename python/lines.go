package python

// The line of an instruction, from a code object's line table, in the
// format of its version, as CPython's own notes on them describe them
// (Objects/lnotab_notes.txt, and InternalDocs on locations from 3.13):
// co_lnotab before 3.10, the 3.10 line table, the location table from
// 3.11. Instructions are counted in code units (2 bytes). Tables are read as they come from the process: a malformed
// one ends the search (line 0), never past its bytes.

// Unit is the code unit a frame's raw instruction field names: f_lasti,
// a byte offset before 3.10 and a unit from 3.10; from 3.11 a pointer
// into the code object at code's co_code_adaptive. ok is false for a
// frame that has not begun (f_lasti -1) or points before its code.
func (l *Layout) Unit(code, raw uint64) (unit uint64, ok bool) {
	switch {
	case l.InterpreterFrames:
		start := code + l.CodeAdaptive
		return (raw - start) / 2, raw >= start
	case int32(raw) < 0:
		return 0, false
	case l.Version.Minor < 10:
		return uint64(int32(raw)) / 2, true
	}
	return uint64(int32(raw)), true
}

// Line is the source line of code unit unit, 0 when unknown.
func (c *Code) Line(unit uint64) int {
	switch {
	case c.v.Minor < 10:
		return lnotabLine(c.lines, c.FirstLine, unit*2)
	case c.v.Minor == 10:
		return linetable310(c.lines, c.FirstLine, unit*2)
	}
	return locationLine(c.lines, c.FirstLine, unit)
}

// lnotabLine reads co_lnotab (3.8, 3.9): pairs of a byte offset increment
// and a signed line increment; the line of offset is the one reached by
// the last pair whose offset is not past it.
func lnotabLine(tab []byte, line int, offset uint64) int {
	var addr uint64
	for i := 0; i+1 < len(tab); i += 2 {
		addr += uint64(tab[i])
		if addr > offset {
			break
		}
		line += int(int8(tab[i+1]))
	}
	return line
}

// linetable310 reads 3.10's co_linetable: pairs of a byte length and a
// signed line delta (-128: no line) making ranges of offsets.
func linetable310(tab []byte, line int, offset uint64) int {
	var end uint64
	for i := 0; i+1 < len(tab); i += 2 {
		start := end
		end += uint64(tab[i])
		ld := int8(tab[i+1])
		if ld != -128 {
			line += int(ld)
		}
		if start <= offset && offset < end {
			if ld == -128 {
				return 0
			}
			return line
		}
	}
	return 0
}

// locationLine reads the location table of 3.11 on: entries of 1 to 8
// code units, each a first byte with bit 7 set (code in bits 3-6, units
// less one in bits 0-2) and a code-dependent body.
func locationLine(tab []byte, line int, unit uint64) int {
	r := tableReader{b: tab}
	var addr uint64
	for r.i < len(r.b) {
		first := r.next()
		if first&0x80 == 0 {
			return 0 // not at an entry: malformed
		}
		code, n := first>>3&15, uint64(first&7)+1
		delta, none := r.lineDelta(code)
		line += delta
		if addr <= unit && unit < addr+n {
			if none || r.bad {
				return 0
			}
			return line
		}
		addr += n
	}
	return 0
}

// tableReader reads a location table's bytes; bad once past its end.
type tableReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *tableReader) next() byte {
	if r.i >= len(r.b) {
		r.bad = true
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// lineDelta reads the body of an entry of kind code: its line delta, and
// whether it has no location.
func (r *tableReader) lineDelta(code byte) (delta int, none bool) {
	switch {
	case code == 15: // no location
		return 0, true
	case code == 14: // long form: line delta, end line, columns
		d := r.svarint()
		r.varint()
		r.varint()
		r.varint()
		return d, false
	case code == 13: // no columns
		return r.svarint(), false
	case code >= 10: // one line, two column bytes
		r.next()
		r.next()
		return int(code) - 10, false
	}
	r.next() // short form: same line, one column byte
	return 0, false
}

// varint reads 6-bit groups, low first, bit 6 saying another follows.
func (r *tableReader) varint() uint64 {
	b := r.next()
	v, shift := uint64(b&63), 0
	for b&64 != 0 && shift < 60 && !r.bad {
		b = r.next()
		shift += 6
		v |= uint64(b&63) << shift
	}
	return v
}

// svarint is a varint holding a sign in its lowest bit.
func (r *tableReader) svarint() int {
	v := r.varint()
	if v&1 != 0 {
		return -int(v >> 1)
	}
	return int(v >> 1)
}
