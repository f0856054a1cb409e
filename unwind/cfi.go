package unwind

import (
	"fmt"
	"math"
	"runtime"
	"strings"
)

// Section names understood by ParseCFI.
const (
	EhFrame    = ".eh_frame"
	DebugFrame = ".debug_frame"
)

// CIE is a parsed Common Information Entry.
type CIE struct {
	Offset       int64 // offset of the record in its section
	Version      uint8
	Augmentation string
	CodeAlign    uint64
	DataAlign    int64
	RAReg        uint64
	FDEEncoding  byte // 'R', absptr when absent
	LSDAEncoding byte // 'L', DW_EH_PE_omit when absent
	Signal       bool // 'S': FDEs using this CIE describe signal frames
	AddrSize     int
	Initial      []byte // initial instructions

	init    *frameState // state after Initial, computed on first use
	initErr error
	bases   Bases
	index   uint32 // in CFI.CIEs
}

// FDE is a parsed Frame Description Entry covering [Start, End). It holds
// no pointers, so that the garbage collector need not scan the FDEs of a
// section (libLLVM-14 has 95,000): its CIE and instructions are found
// through the CFI that holds it (CFI.CIE, CFI.Instructions).
type FDE struct {
	Offset     int64 // of the record in its section
	Start, End uint64
	cie        uint32 // index into CFI.CIEs
	instr      uint32 // the instructions are data[instr:instr+ninstr] of the section
	ninstr     uint32
}

// CFI is the parsed content of one CFI section.
type CFI struct {
	Section string
	CIEs    []*CIE
	FDEs    []FDE
	data    []byte // the section
	addr    uint64 // virtual address of data[0]
}

// CIE returns the CIE of f, one of fr's FDEs.
func (fr *CFI) CIE(f *FDE) *CIE { return fr.CIEs[f.cie] }

// Instructions returns the call frame instructions of f, one of fr's FDEs.
func (fr *CFI) Instructions(f *FDE) []byte { return fr.data[f.instr : f.instr+f.ninstr] }

// instrAddr is the virtual address of f's first instruction, for
// pc-relative DW_CFA_set_loc.
func (fr *CFI) instrAddr(f *FDE) uint64 { return fr.addr + uint64(f.instr) }

type frameParser struct {
	name  string
	data  []byte
	b     Bases
	eh    bool
	cies  map[int64]*CIE
	order []*CIE
}

// ParseCFI parses a .eh_frame or .debug_frame section (chosen by name)
// whose first byte is at virtual address b.Section. It never panics on
// malformed input: errors are *FormatError with the section and offset.
// A large section is parsed in parts on several goroutines (parseParts),
// with the result a single pass gives.
func ParseCFI(name string, data []byte, b Bases) (*CFI, error) {
	if uint64(len(data)) > math.MaxUint32 {
		return &CFI{Section: name}, &FormatError{Section: name, Msg: fmt.Sprintf("%d bytes: more than the 4 GiB an FDE can address", len(data))}
	}
	if n := min(runtime.GOMAXPROCS(0), len(data)/minParseBytes); n > 1 {
		if fr, ok := newFrameParser(name, data, b).parseParts(n); ok {
			return fr, nil
		}
	}
	return newFrameParser(name, data, b).parse()
}

func newFrameParser(name string, data []byte, b Bases) *frameParser {
	return &frameParser{name: name, data: data, b: b, eh: name != DebugFrame, cies: map[int64]*CIE{}}
}

// parse parses the section in one pass, up to the first error.
func (p *frameParser) parse() (*CFI, error) {
	out := p.frames(make([]FDE, 0, len(p.data)/48))
	for off := 0; off < len(p.data); {
		next, fde, isFDE, err := p.record(off)
		if err != nil {
			out.CIEs = p.order
			return out, err
		}
		if next < 0 { // .eh_frame zero terminator
			break
		}
		if isFDE {
			out.FDEs = append(out.FDEs, fde)
		}
		off = next
	}
	out.CIEs = p.order
	return out, nil
}

// frames returns the CFI of the section with fdes (CIEs added by the
// caller, once parsed).
func (p *frameParser) frames(fdes []FDE) *CFI {
	return &CFI{Section: p.name, FDEs: fdes, data: p.data, addr: p.b.Section}
}

func (p *frameParser) errf(off int, format string, args ...any) error {
	return &FormatError{Section: p.name, Offset: int64(off), Msg: fmt.Sprintf(format, args...)}
}

// header reads a record's length and id fields. It returns the record body
// reader (positioned after the id), the id, the offset of the id field, and
// whether the record uses the 64-bit DWARF format.
func (p *frameParser) header(off int) (r reader, id uint64, idOff int, is64 bool, end int, err error) {
	h := reader{buf: p.data, pos: off}
	length := uint64(h.u32())
	if length == 0xffffffff {
		is64 = true
		length = h.u64()
	}
	if h.err {
		return r, 0, 0, false, 0, p.errf(off, "truncated record length")
	}
	if length == 0 {
		return r, 0, 0, false, off + 4, nil
	}
	if length > uint64(h.left()) {
		return r, 0, 0, false, 0, p.errf(off, "record length %#x runs past the section end (%#x bytes left)", length, h.left())
	}
	end = h.pos + int(length)
	idOff = h.pos
	r = reader{buf: p.data[:end], pos: h.pos}
	if is64 {
		id = r.u64()
	} else {
		id = uint64(r.u32())
	}
	if r.err {
		return r, 0, 0, false, 0, p.errf(off, "record too short for its id")
	}
	return r, id, idOff, is64, end, nil
}

// record parses the record at off, returning the next offset (-1 at an
// .eh_frame terminator) and, when the record is an FDE, the FDE.
func (p *frameParser) record(off int) (next int, fde FDE, isFDE bool, err error) {
	r, id, idOff, is64, end, err := p.header(off)
	if err != nil {
		return 0, fde, false, err
	}
	if r.buf == nil { // zero length
		if p.eh {
			return -1, fde, false, nil
		}
		return end, fde, false, nil
	}
	if p.isCIE(id, is64) {
		if _, err := p.cie(int64(off)); err != nil {
			return 0, fde, false, err
		}
		return end, fde, false, nil
	}
	cieOff, ok := p.cieOffset(id, idOff)
	if !ok {
		return 0, fde, false, p.errf(off, "FDE points to CIE at %#x, outside the section", cieOff)
	}
	cie, err := p.cie(cieOff)
	if err != nil {
		return 0, fde, false, err
	}
	fde, err = p.fde(&r, off, cie)
	return end, fde, err == nil, err
}

// cieOffset is the offset of the CIE an FDE's id field (at idOff) points
// to, and whether it is inside the section.
func (p *frameParser) cieOffset(id uint64, idOff int) (int64, bool) {
	off := int64(id)
	if p.eh {
		off = int64(idOff) - int64(id)
	}
	return off, off >= 0 && off < int64(len(p.data))
}

func (p *frameParser) isCIE(id uint64, is64 bool) bool {
	if p.eh {
		return id == 0
	}
	if is64 {
		return id == ^uint64(0)
	}
	return id == 0xffffffff
}

func (p *frameParser) cie(off int64) (*CIE, error) {
	if c, ok := p.cies[off]; ok {
		if c == nil {
			return nil, p.errf(int(off), "CIE refers to itself")
		}
		return c, nil
	}
	p.cies[off] = nil
	r, id, _, is64, _, err := p.header(int(off))
	if err != nil {
		return nil, err
	}
	if r.buf == nil || !p.isCIE(id, is64) {
		return nil, p.errf(int(off), "FDE's CIE pointer does not point to a CIE")
	}
	c, err := p.parseCIE(&r, off)
	if err != nil {
		return nil, err
	}
	p.cies[off] = c
	c.index = uint32(len(p.order))
	p.order = append(p.order, c)
	return c, nil
}

func (p *frameParser) parseCIE(r *reader, off int64) (*CIE, error) {
	c := &CIE{Offset: off, AddrSize: 8, LSDAEncoding: peOmit, FDEEncoding: pePtr, bases: p.b}
	c.Version = r.u8()
	if c.Version != 1 && c.Version != 3 && c.Version != 4 {
		return nil, p.errf(int(off), "unsupported CIE version %d (want 1, 3 or 4)", c.Version)
	}
	c.Augmentation = r.cstring()
	if strings.Contains(c.Augmentation, "eh") {
		r.u64() // GCC 2.x eh_ptr
	}
	if c.Version >= 4 {
		c.AddrSize = int(r.u8())
		r.u8() // segment selector size
		if c.AddrSize != 4 && c.AddrSize != 8 {
			return nil, p.errf(int(off), "unsupported address size %d", c.AddrSize)
		}
	}
	c.CodeAlign = r.uleb()
	c.DataAlign = r.sleb()
	if c.Version == 1 {
		c.RAReg = uint64(r.u8())
	} else {
		c.RAReg = r.uleb()
	}
	if r.err {
		return nil, p.errf(int(off), "CIE: %s", errTruncated)
	}
	if err := p.augmentation(r, c); err != nil {
		return nil, err
	}
	if !p.eh {
		c.FDEEncoding = pePtr // .debug_frame addresses are plain
	}
	c.Initial = r.buf[r.pos:]
	return c, nil
}

// augmentation decodes the 'z' augmentation data (R, P, L, S).
func (p *frameParser) augmentation(r *reader, c *CIE) error {
	aug := c.Augmentation
	if !strings.HasPrefix(aug, "z") {
		if aug != "" && aug != "eh" {
			return p.errf(int(c.Offset), "unknown CIE augmentation %q without 'z'", aug)
		}
		return nil
	}
	n := r.uleb()
	data := r.bytes(n)
	if r.err {
		return p.errf(int(c.Offset), "CIE augmentation data: %s", errTruncated)
	}
	ar := &reader{buf: data}
	b := p.b
	b.Section += uint64(r.pos) - uint64(len(data))
	b.Deref = nil // the personality routine's address is not needed
	for _, ch := range aug[1:] {
		switch ch {
		case 'R':
			c.FDEEncoding = ar.u8()
		case 'L':
			c.LSDAEncoding = ar.u8()
		case 'P':
			enc := ar.u8()
			if _, err := readEncoded(ar, enc&^peIndir, &b, 0, c.AddrSize); err != nil {
				return p.errf(int(c.Offset), "CIE personality: %v", err)
			}
		case 'S':
			c.Signal = true
		case 'B', 'G': // aarch64 BTI / MTE markers: no data
		default:
			return nil // unknown: the 'z' length lets us skip the rest
		}
		if ar.err {
			return p.errf(int(c.Offset), "CIE augmentation %q: %s", aug, errTruncated)
		}
	}
	return nil
}

func (p *frameParser) fde(r *reader, off int, c *CIE) (FDE, error) {
	b := p.b
	enc := c.FDEEncoding // absptr in .debug_frame (parseCIE)
	start, err := readEncoded(r, enc, &b, 0, c.AddrSize)
	if err != nil {
		return FDE{}, p.errf(off, "FDE initial location: %v", err)
	}
	rng, err := readEncoded(r, enc&0x0f, &b, 0, c.AddrSize)
	if err != nil {
		return FDE{}, p.errf(off, "FDE address range: %v", err)
	}
	if p.eh && strings.HasPrefix(c.Augmentation, "z") {
		r.bytes(r.uleb())
	}
	if r.err {
		return FDE{}, p.errf(off, "FDE: %s", errTruncated)
	}
	end := start + rng
	if end < start {
		return FDE{}, p.errf(off, "FDE range %#x+%#x overflows", start, rng)
	}
	return FDE{Offset: int64(off), Start: start, End: end, cie: c.index,
		instr: uint32(r.pos), ninstr: uint32(len(r.buf) - r.pos)}, nil
}
