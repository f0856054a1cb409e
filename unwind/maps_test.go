package unwind

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/procmaps"
)

const sampleMaps = `55d4c7a00000-55d4c7a01000 r--p 00000000 08:01 1234                       /usr/bin/prog
55d4c7a01000-55d4c7a02000 r-xp 00001000 08:01 1234                       /usr/bin/prog
55d4c7a02000-55d4c7a03000 r--p 00002000 08:01 1234                       /usr/bin/prog
7f0000000000-7f0000001000 rw-p 00000000 00:00 0 
7f2c1a228000-7f2c1a3bd000 r-xp 00028000 08:01 1311003                    /usr/lib/x86_64-linux-gnu/libc.so.6
7f2c1a400000-7f2c1a401000 r-xp 00000000 08:01 99                         /tmp/a dir/lib x.so (deleted)
7ffd5d1c0000-7ffd5d1e1000 rw-p 00000000 00:00 0                          [stack]
7ffd5d1f5000-7ffd5d1f7000 r-xp 00000000 00:00 0                          [vdso]
`

func TestParseMaps(t *testing.T) {
	ms, err := ParseMaps(strings.NewReader(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 {
		t.Fatalf("got %d mappings", len(ms))
	}
	want := []procmaps.Mapping{
		{Start: 0x55d4c7a01000, End: 0x55d4c7a02000, Perms: "r-xp", Offset: 0x1000, Dev: "08:01", Inode: 1234, Path: "/usr/bin/prog"},
		{Start: 0x7f0000000000, End: 0x7f0000001000, Perms: "rw-p", Dev: "00:00"},
		{Start: 0x7f2c1a400000, End: 0x7f2c1a401000, Perms: "r-xp", Dev: "08:01", Inode: 99, Path: "/tmp/a dir/lib x.so", Deleted: true},
		{Start: 0x7ffd5d1f5000, End: 0x7ffd5d1f7000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"},
	}
	for i, idx := range []int{1, 3, 5, 7} {
		if ms[idx] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", idx, ms[idx], want[i])
		}
	}
	for _, bad := range []string{"zz-1 r-xp 0 0:0 0", "2-1 r-xp 0 0:0 0", "1-2 r-x 0 0:0 0", "1-2 r-xp 0"} {
		if _, err := ParseMaps(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseMaps(%q) accepted", bad)
		}
	}
}

func TestLoadBias(t *testing.T) {
	// GNU ld PIE: vaddr == offset for every segment.
	gnu := []Segment{
		{Vaddr: 0, Offset: 0, Filesz: 0x6d0, Flags: 4},
		{Vaddr: 0x1000, Offset: 0x1000, Filesz: 0x1a5, Flags: 5},
		{Vaddr: 0x3df0, Offset: 0x2df0, Filesz: 0x220, Flags: 6},
	}
	// lld layout: p_vaddr - p_offset differs per segment.
	lld := []Segment{
		{Vaddr: 0, Offset: 0, Filesz: 0x5e4, Flags: 4},
		{Vaddr: 0x15f0, Offset: 0x5f0, Filesz: 0x1a0, Flags: 5},
		{Vaddr: 0x2790, Offset: 0x790, Filesz: 0x1e0, Flags: 6},
	}
	// non-PIE at 0x400000.
	nopie := []Segment{
		{Vaddr: 0x400000, Offset: 0, Filesz: 0x500, Flags: 4},
		{Vaddr: 0x401000, Offset: 0x1000, Filesz: 0x200, Flags: 5},
	}
	tests := []struct {
		name  string
		loads []Segment
		m     procmaps.Mapping
		want  uint64
	}{
		{"gnu text", gnu, procmaps.Mapping{Start: 0x55550001000, Offset: 0x1000, Perms: "r-xp"}, 0x55550000000},
		{"gnu relro part", gnu, procmaps.Mapping{Start: 0x55550003000, Offset: 0x2000, Perms: "r--p"}, 0x55550000000},
		// text page of lld: mmap(bias+0x1000, offset 0) maps vaddr 0x1000 at file offset 0.
		{"lld text", lld, procmaps.Mapping{Start: 0x7f0000001000, Offset: 0, Perms: "r-xp"}, 0x7f0000000000},
		{"lld data", lld, procmaps.Mapping{Start: 0x7f0000002000, Offset: 0, Perms: "rw-p"}, 0x7f0000000000},
		{"nopie", nopie, procmaps.Mapping{Start: 0x401000, Offset: 0x1000, Perms: "r-xp"}, 0},
	}
	for _, tt := range tests {
		got, err := LoadBias(tt.loads, tt.m)
		if err != nil || got != tt.want {
			t.Errorf("%s: LoadBias = %#x, %v; want %#x", tt.name, got, err, tt.want)
		}
	}
	if _, err := LoadBias(gnu, procmaps.Mapping{Start: 0x1000, Offset: 0x9000}); err == nil {
		t.Error("offset outside every segment accepted")
	}
}
