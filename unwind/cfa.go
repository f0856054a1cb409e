package unwind

import (
	"errors"
	"fmt"
	"math/bits"
)

// DWARF register numbers on x86_64 (System V psABI, figure 3.36).
const (
	regRBX = 3
	regRBP = 6
	regRSP = 7
	regRIP = 16 // return address column
)

// regKind is a DWARF register rule.
type regKind uint8

const (
	regUnspec    regKind = iota // never mentioned: callee-saved, so "same value"
	regUndef                    // DW_CFA_undefined
	regSame                     // DW_CFA_same_value
	regOffset                   // saved at CFA+off
	regValOffset                // value is CFA+off
	regRegister                 // in register off
	regExpr                     // saved at address computed by expr
	regValExpr                  // value computed by expr
)

type regRule struct {
	kind regKind
	off  int64
	expr []byte
}

type cfaRule struct {
	reg  uint64
	off  int64
	expr []byte // non-nil: DW_CFA_def_cfa_expression
}

// frameState is the part of a CFI row probee tracks: CFA, rbp, rbx (ld.so's
// lazy-binding trampolines compute their CFA from it) and the
// return-address column. Other registers are decoded and ignored.
type frameState struct {
	cfa          cfaRule
	rbp, rbx, ra regRule
}

// maxStateDepth bounds DW_CFA_remember_state nesting (GCC emits 1-2).
const maxStateDepth = 64

type interp struct {
	cie   *CIE
	st    frameState
	init  *frameState
	stack []frameState
	loc   uint64
	base  uint64 // virtual address of the instructions' first byte

	fde   *FDE  // nil while running a CIE's initial instructions
	out   []Row // rows emitted so far
	first int   // index of the FDE's first row in out
}

var errStateStack = errors.New("DW_CFA_restore_state without a matching remember_state")

// run executes CFA instructions; for an FDE, the row in force is emitted
// before every location change (and by the caller at the end).
func (in *interp) run(instrs []byte) error {
	r := &reader{buf: instrs}
	for r.left() > 0 {
		at := r.pos
		if err := in.step(r); err != nil {
			return fmt.Errorf("CFA instruction at +%#x: %w", at, err)
		}
		if r.err {
			return fmt.Errorf("CFA instruction at +%#x: %s", at, errTruncated)
		}
	}
	return nil
}

// advance records the row in force and moves the location delta bytes on.
// A move past the end of the address space is an error: wrapped around, it
// would put rows out of order.
func (in *interp) advance(delta uint64) error {
	if len(in.out)-in.first >= maxFDERows {
		return fmt.Errorf("more than %d rows in one FDE: refused (a function's FDE has hundreds)", maxFDERows)
	}
	in.emitRow(in.loc, &in.st)
	loc, carry := bits.Add64(in.loc, delta, 0)
	if carry != 0 {
		return fmt.Errorf("advancing %#x bytes from %#x passes the end of the address space", delta, in.loc)
	}
	in.loc = loc
	return nil
}

// advanceUnits is advance by n units of the CIE's code alignment factor.
func (in *interp) advanceUnits(n uint64) error {
	hi, delta := bits.Mul64(n, in.cie.CodeAlign)
	if hi != 0 {
		return fmt.Errorf("advance of %d x code alignment %d overflows", n, in.cie.CodeAlign)
	}
	return in.advance(delta)
}

func (in *interp) reg(n uint64) *regRule {
	switch n {
	case in.cie.RAReg:
		return &in.st.ra
	case regRBP:
		return &in.st.rbp
	case regRBX:
		return &in.st.rbx
	}
	return nil
}

func (in *interp) setReg(n uint64, k regKind, off int64, expr []byte) {
	if p := in.reg(n); p != nil {
		*p = regRule{kind: k, off: off, expr: expr}
	}
}

func (in *interp) restoreReg(n uint64) {
	p := in.reg(n)
	if p == nil {
		return
	}
	if in.init == nil { // inside the CIE's own initial instructions
		*p = regRule{}
		return
	}
	switch n {
	case in.cie.RAReg:
		*p = in.init.ra
	case regRBP:
		*p = in.init.rbp
	default:
		*p = in.init.rbx
	}
}

func (in *interp) step(r *reader) error {
	op := r.u8()
	lo := uint64(op & 0x3f)
	da := in.cie.DataAlign
	switch op & 0xc0 {
	case 0x40: // DW_CFA_advance_loc
		return in.advanceUnits(lo)
	case 0x80: // DW_CFA_offset
		in.setReg(lo, regOffset, int64(r.uleb())*da, nil)
		return nil
	case 0xc0: // DW_CFA_restore
		in.restoreReg(lo)
		return nil
	}
	return in.extended(op, r)
}

func (in *interp) extended(op byte, r *reader) error {
	da := in.cie.DataAlign
	switch op {
	case 0x00: // nop
	case 0x01: // set_loc
		return in.setLoc(r)
	case 0x02:
		return in.advanceUnits(uint64(r.u8()))
	case 0x03:
		return in.advanceUnits(uint64(r.u16()))
	case 0x04:
		return in.advanceUnits(uint64(r.u32()))
	case 0x1d: // DW_CFA_MIPS_advance_loc8
		return in.advanceUnits(r.u64())
	case 0x05: // offset_extended
		n := r.uleb()
		in.setReg(n, regOffset, int64(r.uleb())*da, nil)
	case 0x11: // offset_extended_sf
		n := r.uleb()
		in.setReg(n, regOffset, r.sleb()*da, nil)
	case 0x2f: // GNU_negative_offset_extended
		n := r.uleb()
		in.setReg(n, regOffset, -int64(r.uleb())*da, nil)
	case 0x14: // val_offset
		n := r.uleb()
		in.setReg(n, regValOffset, int64(r.uleb())*da, nil)
	case 0x15: // val_offset_sf
		n := r.uleb()
		in.setReg(n, regValOffset, r.sleb()*da, nil)
	case 0x06: // restore_extended
		in.restoreReg(r.uleb())
	case 0x07:
		in.setReg(r.uleb(), regUndef, 0, nil)
	case 0x08:
		in.setReg(r.uleb(), regSame, 0, nil)
	case 0x09: // register
		n := r.uleb()
		in.setReg(n, regRegister, int64(r.uleb()), nil)
	case 0x10, 0x16: // expression, val_expression
		n := r.uleb()
		e := r.bytes(r.uleb())
		k := regExpr
		if op == 0x16 {
			k = regValExpr
		}
		in.setReg(n, k, 0, e)
	default:
		return in.cfaOp(op, r)
	}
	return nil
}

func (in *interp) cfaOp(op byte, r *reader) error {
	da := in.cie.DataAlign
	c := &in.st.cfa
	switch op {
	case 0x0a: // remember_state
		if len(in.stack) >= maxStateDepth {
			return fmt.Errorf("DW_CFA_remember_state nested deeper than %d", maxStateDepth)
		}
		in.stack = append(in.stack, in.st)
	case 0x0b: // restore_state
		if len(in.stack) == 0 {
			return errStateStack
		}
		in.st = in.stack[len(in.stack)-1]
		in.stack = in.stack[:len(in.stack)-1]
	case 0x0c: // def_cfa
		c.reg, c.off, c.expr = r.uleb(), int64(r.uleb()), nil
	case 0x12: // def_cfa_sf
		c.reg, c.off, c.expr = r.uleb(), r.sleb()*da, nil
	case 0x0d: // def_cfa_register
		c.reg, c.expr = r.uleb(), nil
	case 0x0e: // def_cfa_offset
		c.off = int64(r.uleb())
	case 0x13: // def_cfa_offset_sf
		c.off = r.sleb() * da
	case 0x0f: // def_cfa_expression
		e := r.bytes(r.uleb())
		if e == nil {
			e = []byte{}
		}
		c.expr = e
	case 0x2e: // GNU_args_size
		r.uleb()
	case 0x2d: // GNU_window_save (SPARC/AArch64): no operands
	default:
		return fmt.Errorf("unknown DW_CFA opcode %#x", op)
	}
	return nil
}

func (in *interp) setLoc(r *reader) error {
	b := in.cie.bases
	b.Section = in.base
	v, err := readEncoded(r, in.cie.FDEEncoding, &b, 0, in.cie.AddrSize)
	if err != nil {
		return err
	}
	if v < in.loc {
		return fmt.Errorf("DW_CFA_set_loc %#x moves backwards from %#x", v, in.loc)
	}
	return in.advance(v - in.loc)
}

// initialState runs the CIE's initial instructions once and caches the result.
func (c *CIE) initialState() (*frameState, error) {
	if c.init != nil || c.initErr != nil {
		return c.init, c.initErr
	}
	in := &interp{cie: c}
	if err := in.run(c.Initial); err != nil {
		c.initErr = fmt.Errorf("CIE at %#x initial instructions: %w", c.Offset, err)
		return nil, c.initErr
	}
	st := in.st
	c.init = &st
	return c.init, nil
}
