package safeelf

import (
	"debug/elf"
	"os"
	"testing"
)

// Two segments as a PIE's text and data: the data segment's file bytes end
// before its memory (.bss), and its vaddr - offset differs from the text's.
var testLoads = []Segment{
	{Vaddr: 0x1000, Offset: 0x1000, Filesz: 0x2000, Memsz: 0x2000, Flags: elf.PF_R | elf.PF_X},
	{Vaddr: 0x5e00, Offset: 0x3e00, Filesz: 0x200, Memsz: 0x1000, Flags: elf.PF_R | elf.PF_W},
}

func TestHolds(t *testing.T) {
	s := testLoads[0]
	for _, c := range []struct {
		addr, n uint64
		want    bool
	}{
		{0x1000, 1, true},
		{0x2fff, 1, true},
		{0x3000, 1, false}, // one past the end
		{0xfff, 1, false},
		{0x2ff8, 8, true},
		{0x2ff9, 8, false}, // runs past the end
		{0x1000, 0x2000, true},
		{0x1000, 0x2001, false},
		{^uint64(0) - 3, 8, false}, // no wrap-around
	} {
		if got := s.Holds(c.addr, c.n); got != c.want {
			t.Errorf("Holds(%#x, %d) = %v, want %v", c.addr, c.n, got, c.want)
		}
	}
}

func TestFind(t *testing.T) {
	for _, c := range []struct {
		addr    uint64
		ok      bool
		off     uint64
		exec    bool
		segment int
	}{
		{0x1234, true, 0x1234, true, 0},
		{0x5e10, true, 0x3e10, false, 1},
		{0x6100, false, 0, false, 0}, // .bss: in memory, not in the file
		{0x4000, false, 0, false, 0},
	} {
		s, ok := Find(testLoads, c.addr)
		if ok != c.ok || ok && (s != testLoads[c.segment] || s.FileOffset(c.addr) != c.off || s.Exec() != c.exec) {
			t.Errorf("Find(%#x) = %+v, %v", c.addr, s, ok)
		}
		if !ok {
			continue
		}
		back, ok := FindOffset(testLoads, c.off)
		if !ok || back.VirtAddr(c.off) != c.addr {
			t.Errorf("FindOffset(%#x) = %+v, %v: not back at %#x", c.off, back, ok, c.addr)
		}
	}
	if _, ok := FindOffset(testLoads, 0x4000); ok {
		t.Error("FindOffset(0x4000) found a segment: the file gap is in none")
	}
}

// ReadAt reads through the segments of a real file: the ELF header is at
// file offset 0, and the first PT_LOAD of a linked file maps it.
func TestReadAt(t *testing.T) {
	f, err := Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	loads := Loads(f.File)
	first, ok := FindOffset(loads, 0)
	if !ok {
		t.Skip("the first PT_LOAD does not map the ELF header")
	}
	b := make([]byte, 4)
	if err := ReadAt(f.File, b, first.VirtAddr(0)); err != nil || string(b) != elf.ELFMAG {
		t.Errorf("ReadAt(header) = %q, %v", b, err)
	}
	last := loads[len(loads)-1]
	if err := ReadAt(f.File, b, last.Vaddr+last.Filesz-2); err == nil {
		t.Error("a read running past the last segment's file bytes succeeded")
	}
	raw, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if err := ReadAt(f.File, b, last.Vaddr+last.Filesz-4); err != nil || string(b) != string(raw[last.Offset+last.Filesz-4:last.Offset+last.Filesz]) {
		t.Errorf("ReadAt(last 4 file bytes) = %x, %v", b, err)
	}
}
