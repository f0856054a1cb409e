package gopclntab

import (
	"bytes"
	"encoding/binary"
)

// The lookups of a Go 1.20+ table, read here rather than through
// debug/gosym, whose Table makes every function's symbol up front: for
// terraform's 102,000 functions that took 55 ms and 26 MB, where a
// profile looks up a few hundred.

// fn is one function of the function table: [entry, end) and its entry
// (_func) in the table.
type fn struct {
	entry, end uint64
	data       []byte
}

// Offsets in a function's entry (_func) of a Go 1.20+ table: the name's
// offset, the offsets of its file and line tables in the pc-value tables,
// its compile unit's first file in the compile-unit table, the count of
// pc-value tables, the count of data offsets, then the tables' offsets (4
// bytes each), then the data offsets (4 bytes each).
const (
	funcName      = 4
	funcPcfile    = 20
	funcPcln      = 24
	funcNpcdata   = 28
	funcCuOffset  = 32
	funcNfuncdata = 43
	funcPcdata    = 44
)

// nfuncs returns how many functions the function table lists (it lists
// nfunc+1 (entry offset, entry's offset) pairs, the last one the end).
func (t *Table) nfuncs() uint64 {
	if t.nfunc == 0 || uint64(len(t.pcln))/8 < t.nfunc+1 {
		return 0
	}
	return t.nfunc
}

// function returns the i-th function of the function table.
func (t *Table) function(i uint64) (fn, bool) {
	entry := t.text + uint64(t.bo.Uint32(t.pcln[8*i:]))
	end := t.text + uint64(t.bo.Uint32(t.pcln[8*i+8:]))
	off := uint64(t.bo.Uint32(t.pcln[8*i+4:]))
	if off+funcPcdata > uint64(len(t.pcln)) {
		return fn{}, false
	}
	return fn{entry: entry, end: end, data: t.pcln[off:]}, true
}

// find returns the function holding pc: the last entry at or below it.
func (t *Table) find(pc uint64) (fn, bool) {
	n := t.nfuncs()
	if n == 0 || pc < t.text {
		return fn{}, false
	}
	off := pc - t.text
	lo, hi := uint64(0), n // the answer is lo-1 at the end
	for lo < hi {
		mid := lo + (hi-lo)/2
		if uint64(t.bo.Uint32(t.pcln[8*mid:])) <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return fn{}, false
	}
	f, ok := t.function(lo - 1)
	return f, ok && pc < f.end
}

// baseName returns function f's name, "·" made "." (symName), without the
// ".abi0" that name adds to an ABI0 half.
func (t *Table) baseName(f fn) (string, bool) {
	return t.funcName(int32(t.bo.Uint32(f.data[funcName:])))
}

// nameBytes returns the bytes of function f's name in the table.
func (t *Table) nameBytes(f fn) ([]byte, bool) {
	return cBytes(t.names, uint64(t.bo.Uint32(f.data[funcName:])))
}

// lineAt returns the file and line of pc in function f; "" and 0 where
// the table has none (the padding after the code).
func (t *Table) lineAt(f fn, pc uint64) (string, int) {
	file, ok := t.pcvalueAt(uint64(t.bo.Uint32(f.data[funcPcfile:])), f.entry, pc)
	if !ok {
		return "", 0
	}
	line, ok := t.pcvalueAt(uint64(t.bo.Uint32(f.data[funcPcln:])), f.entry, pc)
	if !ok || line <= 0 {
		return "", 0
	}
	name, ok := t.fileName(f, file)
	if !ok {
		return "", 0
	}
	return name, int(line)
}

// fileName returns the name of file index idx of function f: the
// compile-unit table maps the unit's indexes to file-table offsets.
func (t *Table) fileName(f fn, idx int32) (string, bool) {
	at := uint64(t.bo.Uint32(f.data[funcCuOffset:])) + uint64(idx)
	if idx < 0 || 4*at+4 > uint64(len(t.cutab)) {
		return "", false
	}
	return cString(t.files, uint64(t.bo.Uint32(t.cutab[4*at:])))
}

// funcName returns the name at off in the function names.
func (t *Table) funcName(off int32) (string, bool) {
	if off < 0 {
		return "", false
	}
	s, ok := cString(t.names, uint64(off))
	return symName(s), ok
}

// cString returns the NUL-terminated, non-empty string at off in b.
func cString(b []byte, off uint64) (string, bool) {
	s, ok := cBytes(b, off)
	return string(s), ok
}

// cBytes returns the bytes of the NUL-terminated, non-empty string at off
// in b.
func cBytes(b []byte, off uint64) ([]byte, bool) {
	if off >= uint64(len(b)) {
		return nil, false
	}
	end := bytes.IndexByte(b[off:], 0)
	if end <= 0 {
		return nil, false
	}
	return b[off : off+uint64(end)], true
}

// pcvalueAt returns the value the pc-value table at off gives pc in the
// function at entry. A table is a sequence of (value delta, pc delta)
// pairs of varints, the value's zigzag-coded, starting from -1 at the
// entry; a zero value delta after the first pair ends it.
func (t *Table) pcvalueAt(off, entry, pc uint64) (int32, bool) {
	if off == 0 || off >= uint64(len(t.pctab)) {
		return 0, false
	}
	val, at, p := int32(-1), entry, t.pctab[off:]
	for first := true; ; first = false {
		dv, n := binary.Uvarint(p)
		if n <= 0 || (dv == 0 && !first) {
			return 0, false
		}
		p = p[n:]
		v := uint32(dv)
		val += int32(-(v & 1) ^ (v >> 1))
		dpc, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		if at += dpc * t.quantum; pc < at {
			return val, true
		}
	}
}
