package safeelf

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// tinyELF is a 64-bit little-endian ET_DYN of one PT_LOAD at offset 0
// that claims filesz bytes, with the given sections after the headers.
type tinySection struct {
	name  string
	typ   elf.SectionType
	flags elf.SectionFlag
	data  []byte
}

func tinyELF(filesz uint64, secs ...tinySection) []byte {
	le := binary.LittleEndian
	var body bytes.Buffer
	body.Write(make([]byte, 64+56)) // ELF header, one program header
	shstr := []byte{0}
	type placed struct {
		name, off, size uint64
		s               tinySection
	}
	var ps []placed
	for _, s := range secs {
		ps = append(ps, placed{uint64(len(shstr)), uint64(body.Len()), uint64(len(s.data)), s})
		shstr = append(append(shstr, s.name...), 0)
		body.Write(s.data)
	}
	strName := uint64(len(shstr))
	shstr = append(append(shstr, ".shstrtab"...), 0)
	strOff := uint64(body.Len())
	body.Write(shstr)
	shoff := uint64(body.Len())
	sh := make([]byte, 64*(len(ps)+2))
	for i, p := range ps {
		h := sh[64*(i+1):]
		le.PutUint32(h, uint32(p.name))
		le.PutUint32(h[4:], uint32(p.s.typ))
		le.PutUint64(h[8:], uint64(p.s.flags))
		le.PutUint64(h[24:], p.off)
		le.PutUint64(h[32:], p.size)
		le.PutUint64(h[48:], 1)
	}
	h := sh[64*(len(ps)+1):]
	le.PutUint32(h, uint32(strName))
	le.PutUint32(h[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(h[24:], strOff)
	le.PutUint64(h[32:], uint64(len(shstr)))
	body.Write(sh)
	b := body.Bytes()
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], 1)
	le.PutUint64(b[32:], 64)    // e_phoff
	le.PutUint64(b[40:], shoff) // e_shoff
	le.PutUint16(b[52:], 64)
	le.PutUint16(b[54:], 56)
	le.PutUint16(b[56:], 1)
	le.PutUint16(b[58:], 64)
	le.PutUint16(b[60:], uint16(len(ps)+2))
	le.PutUint16(b[62:], uint16(len(ps)+1))
	ph := b[64:]
	le.PutUint32(ph, uint32(elf.PT_LOAD))
	le.PutUint32(ph[4:], uint32(elf.PF_R|elf.PF_X))
	le.PutUint64(ph[32:], filesz)
	le.PutUint64(ph[40:], filesz)
	return b
}

// zlibSection is an SHF_COMPRESSED section body that says it inflates to
// size bytes, and holds the deflated form of n zeros.
func zlibSection(size uint64, n int) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(make([]byte, n))
	w.Close()
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr, uint32(elf.COMPRESS_ZLIB))
	binary.LittleEndian.PutUint64(hdr[8:], size)
	binary.LittleEndian.PutUint64(hdr[16:], 1)
	return append(hdr, z.Bytes()...)
}

func parse(t *testing.T, b []byte) *elf.File {
	t.Helper()
	f, err := NewFile("crafted.so", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A segment's size is a claim: 1 TiB is past the budget before anything
// is allocated (a fatal out-of-memory in unwind before), and a claim the
// budget allows but the file does not hold fails at the file's end,
// having allocated about what the file holds.
func TestReadVirtClaims(t *testing.T) {
	f := parse(t, tinyELF(1<<40))
	if _, err := ReadVirt(f, "crafted.so", ".eh_frame", 64, 1<<40-64); !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "crafted.so: .eh_frame of 1024.0 GiB is past its budget of 1 GiB") {
		t.Errorf("1 TiB: %v, want the budget error naming the file", err)
	}
	var err error
	n := allocated(func() { _, err = ReadVirt(f, "crafted.so", ".eh_frame", 64, 512<<20) })
	if !errors.Is(err, io.ErrUnexpectedEOF) || n > 4<<20 {
		t.Errorf("512 MiB claimed in a small file: %v, %d bytes allocated", err, n)
	}
	b, err := ReadVirt(f, "crafted.so", "header", 0, 4)
	if err != nil || string(b) != elf.ELFMAG {
		t.Errorf("4 bytes: %q, %v", b, err)
	}
}

// A compressed section is checked by its size after decompression: a zlib
// bomb is refused before it is inflated.
func TestSectionDataBudget(t *testing.T) {
	old := MaxSection
	MaxSection = 1 << 20
	defer func() { MaxSection = old }()
	f := parse(t, tinyELF(4096,
		tinySection{".debug_line", elf.SHT_PROGBITS, elf.SHF_COMPRESSED, zlibSection(8<<20, 8<<20)},
		tinySection{".debug_str", elf.SHT_PROGBITS, elf.SHF_COMPRESSED, zlibSection(1000, 1000)}))
	var err error
	n := allocated(func() { _, err = SectionData("crafted.so", f.Section(".debug_line")) })
	if !errors.Is(err, ErrBudget) || n > 1<<20 {
		t.Errorf("8 MiB inflated past a 1 MiB budget: %v, %d bytes allocated", err, n)
	}
	if b, err := SectionData("crafted.so", f.Section(".debug_str")); err != nil || len(b) != 1000 {
		t.Errorf("small section: %d bytes, %v", len(b), err)
	}
	if _, err := DWARF("crafted.so", f); !errors.Is(err, ErrBudget) {
		t.Errorf("DWARF with a bomb: %v, want the budget error", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 bytes", 300: "300 bytes", 1536: "1.5 KiB", 64 << 20: "64 MiB", 1 << 30: "1 GiB", 3<<30 + 1<<29: "3.5 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// Many .debug_* headers make debug/elf's DWARF quadratic: refused.
func TestDWARFTooManySections(t *testing.T) {
	var secs []tinySection
	for range MaxDebugSections + 1 {
		secs = append(secs, tinySection{".debug_types", elf.SHT_PROGBITS, 0, []byte{0}})
	}
	f := parse(t, tinyELF(4096, secs...))
	if _, err := DWARF("crafted.so", f); !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "sections") {
		t.Errorf("%d .debug_types sections: %v", len(secs), err)
	}
}
