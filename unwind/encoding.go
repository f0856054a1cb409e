package unwind

import "fmt"

// DW_EH_PE pointer encodings (LSB 4.1 "DWARF Extensions", .eh_frame).
const (
	pePtr     = 0x00 // absptr: native size
	peULEB    = 0x01
	peUData2  = 0x02
	peUData4  = 0x03
	peUData8  = 0x04
	peSigned  = 0x08 // "signed" variant of absptr
	peSLEB    = 0x09
	peSData2  = 0x0a
	peSData4  = 0x0b
	peSData8  = 0x0c
	pePCRel   = 0x10
	peTextRel = 0x20
	peDataRel = 0x30
	peFuncRel = 0x40
	peAligned = 0x50
	peIndir   = 0x80
	peOmit    = 0xff
)

// Bases holds the addresses the relative pointer encodings are relative to.
// Zero values make textrel/datarel decode to plain offsets.
type Bases struct {
	Section uint64 // virtual address of the CFI section (pcrel base = Section + field offset)
	Text    uint64 // DW_EH_PE_textrel base (.text)
	Data    uint64 // DW_EH_PE_datarel base (.got on x86_64)
	// Deref reads a pointer at a virtual address for DW_EH_PE_indirect; nil
	// makes indirect pointers an error where their value is needed.
	Deref func(addr uint64) (uint64, bool)
}

// readEncoded decodes one pointer with encoding enc from r. funcBase is the
// DW_EH_PE_funcrel base (the FDE's initial location, 0 while unknown).
func readEncoded(r *reader, enc byte, b *Bases, funcBase uint64, addrSize int) (uint64, error) {
	if enc == peOmit {
		return 0, nil
	}
	fieldAddr := b.Section + uint64(r.pos)
	if enc&0x70 == peAligned {
		for r.pos%addrSize != 0 && !r.err {
			r.u8()
		}
		fieldAddr = b.Section + uint64(r.pos)
	}
	v, err := readFormat(r, enc&0x0f, addrSize)
	if err != nil {
		return 0, err
	}
	switch enc & 0x70 {
	case 0, peAligned:
	case pePCRel:
		v += fieldAddr
	case peTextRel:
		v += b.Text
	case peDataRel:
		v += b.Data
	case peFuncRel:
		v += funcBase
	default:
		return 0, fmt.Errorf("unknown pointer encoding %#x", enc)
	}
	if enc&peIndir != 0 {
		if b.Deref == nil {
			return 0, fmt.Errorf("indirect pointer (encoding %#x) at %#x cannot be read", enc, fieldAddr)
		}
		p, ok := b.Deref(v)
		if !ok {
			return 0, fmt.Errorf("indirect pointer to %#x is outside the file", v)
		}
		v = p
	}
	return v, nil
}

func readFormat(r *reader, format byte, addrSize int) (uint64, error) {
	switch format {
	case pePtr, peSigned:
		if addrSize == 4 {
			if format == peSigned {
				return uint64(int64(int32(r.u32()))), nil
			}
			return uint64(r.u32()), nil
		}
		return r.u64(), nil
	case peULEB:
		return r.uleb(), nil
	case peUData2:
		return uint64(r.u16()), nil
	case peUData4:
		return uint64(r.u32()), nil
	case peUData8, peSData8:
		return r.u64(), nil
	case peSLEB:
		return uint64(r.sleb()), nil
	case peSData2:
		return uint64(int64(int16(r.u16()))), nil
	case peSData4:
		return uint64(int64(int32(r.u32()))), nil
	}
	return 0, fmt.Errorf("unknown pointer format %#x", format)
}
