package unwind

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// handCIEFDE builds a small .eh_frame: a CIE "zR" (pcrel|sdata4) and one FDE
// for [0x2000, 0x2040) with push rbp; mov rbp,rsp; ... leave; ret style CFI.
func handCIEFDE() []byte {
	cie := []byte{
		1,           // version
		'z', 'R', 0, // augmentation
		1,       // code align
		0x78,    // data align -8
		16,      // RA register
		1, 0x1b, // aug data: pcrel|sdata4
		0x0c, 7, 8, // def_cfa rsp+8
		0x90, 1, // offset rip at cfa-8
		0, 0, // nop padding
	}
	fde := []byte{
		0, 0, 0, 0, // pc begin, patched
		0x40, 0, 0, 0, // pc range
		0,        // aug data length
		0x41,     // advance_loc 1
		0x0e, 16, // def_cfa_offset 16
		0x86, 2, // rbp at cfa-16
		0x43,    // advance_loc 3
		0x0d, 6, // def_cfa_register rbp
		0x0a,       // remember_state
		0x58,       // advance_loc 0x18
		0x0c, 7, 8, // def_cfa rsp+8
		0xc6, // restore rbp
		0x41, // advance_loc 1
		0x0b, // restore_state
		0, 0,
	}
	var out []byte
	out = binary.LittleEndian.AppendUint32(out, uint32(4+len(cie)))
	out = binary.LittleEndian.AppendUint32(out, 0)
	out = append(out, cie...)
	fdeOff := len(out)
	out = binary.LittleEndian.AppendUint32(out, uint32(4+len(fde)))
	out = binary.LittleEndian.AppendUint32(out, uint32(fdeOff+4)) // CIE pointer
	pcField := len(out)
	out = append(out, fde...)
	// section at 0x1000: pc begin = 0x2000 - (0x1000 + pcField)
	binary.LittleEndian.PutUint32(out[pcField:], uint32(int32(0x2000-(0x1000+pcField))))
	return append(out, 0, 0, 0, 0) // terminator
}

func TestHandFrames(t *testing.T) {
	fr, err := ParseCFI(EhFrame, handCIEFDE(), Bases{Section: 0x1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.FDEs) != 1 || fr.FDEs[0].Start != 0x2000 || fr.FDEs[0].End != 0x2040 {
		t.Fatalf("FDEs = %+v", fr.FDEs)
	}
	tab, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	framed := Rule{CFA: CFARBP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}
	tests := []struct {
		pc   uint64
		want Rule
		ok   bool
	}{
		{0x1fff, Rule{}, false},
		{0x2000, Rule{CFA: CFARSP, CFAOffset: 8}, true},
		{0x2001, Rule{CFA: CFARSP, CFAOffset: 16, RBP: RBPOffset, RBPOffset: -16}, true},
		{0x2004, framed, true},
		{0x201b, framed, true},
		{0x201c, Rule{CFA: CFARSP, CFAOffset: 8}, true}, // after leave: restored rbp
		{0x201d, framed, true},                          // restore_state
		{0x203f, framed, true},
		{0x2040, Rule{}, false}, // end-of-function marker
		{0x9000, Rule{}, false},
	}
	for _, tt := range tests {
		got, ok := tab.Lookup(tt.pc)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%#x) = %v, %v; want %v, %v", tt.pc, got, ok, tt.want, tt.ok)
		}
	}
}

// An advance past the end of the address space wrapped around to an
// earlier location: its rows came out of order and the table's entries
// with them, which the lookup misreads. It is now a bad FDE.
func TestAdvanceWraps(t *testing.T) {
	data := handCIEFDE()
	// After "remember_state; advance_loc 0x18" (pc 0x201c), change the
	// rule and advance by 2^64-16 bytes (back to 0x200c), then change it
	// again and advance once more.
	i := bytes.Index(data, []byte{0x0a, 0x58}) + 2
	wrap := binary.LittleEndian.AppendUint64([]byte{0x0e, 40, 0x1d}, ^uint64(0)-15)
	wrap = append(wrap, 0x0e, 24, 0x41)
	data = slices.Concat(data[:i], wrap, data[i:])
	cieEnd := 4 + int(binary.LittleEndian.Uint32(data)) // the FDE's length field
	binary.LittleEndian.PutUint32(data[cieEnd:], binary.LittleEndian.Uint32(data[cieEnd:])+uint32(len(wrap)))
	fr, err := ParseCFI(EhFrame, data, Bases{Section: 0x1000})
	if err != nil || len(fr.FDEs) != 1 {
		t.Fatalf("parse: %v, %d FDEs", err, len(fr.FDEs))
	}
	tab, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Stats.BadFDEs != 1 || !strings.Contains(tab.Stats.FirstError, "end of the address space") {
		t.Errorf("stats %+v, want the FDE marked bad", tab.Stats)
	}
	if _, err := tab.MarshalBinary(); err != nil {
		t.Errorf("table out of order: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	good := handCIEFDE()
	tests := []struct {
		name string
		data []byte
	}{
		{"length past end", []byte{0xff, 0, 0, 0, 0, 0, 0, 0}},
		{"short length", []byte{1, 0}},
		{"bad CIE pointer", []byte{8, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0}},
		{"bad version", []byte{8, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0}},
		{"truncated CIE", good[:10]},
		// An aligned ('P' 0x50) personality pointer running off the end used
		// to spin forever looking for alignment.
		{"aligned past end", []byte{12, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'P', 0, 1, 0x78, 16, 2, 0x50, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCFI(EhFrame, tt.data, Bases{})
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Section != EhFrame {
				t.Fatalf("err = %v, want a .eh_frame FormatError", err)
			}
		})
	}
}

func TestMatchPLT(t *testing.T) {
	expr := func(lit byte) []byte {
		return []byte{0x77, 8, 0x80, 0, 0x3f, 0x1a, lit, 0x2a, 0x33, 0x24, 0x22}
	}
	tests := []struct {
		name string
		e    []byte
		off  int32
		thr  uint8
		ok   bool
	}{
		{"lit11", expr(0x3b), 8, 11, true},
		{"lit10", expr(0x3a), 8, 10, true},
		{"lit12", expr(0x3c), 0, 0, false},
		{"trailing", append(expr(0x3b), 0x96), 0, 0, false},
		{"short", expr(0x3b)[:6], 0, 0, false},
		{"deref", []byte{0x76, 0x78, 0x06}, 0, 0, false},
	}
	for _, tt := range tests {
		off, thr, ok := matchPLT(tt.e)
		if off != tt.off || thr != tt.thr || ok != tt.ok {
			t.Errorf("%s: got %d %d %v", tt.name, off, thr, ok)
		}
	}
}
