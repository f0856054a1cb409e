package bpf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cost of one element of each map --max-stacks sizes, as README.md
// gives it (user stacks: 512 bytes, 1 KiB, 4 KiB on demand), and the
// bucket arrays as the kernel reports them (fdinfo memlock of a map of
// 4000000 entries: 67109760 bytes, 384 of them the map itself).
func TestHashMapCost(t *testing.T) {
	spec := mapSpecs()
	for _, tc := range []struct {
		name    string
		entries uint32
		flags   uint32
		want    uint64
	}{
		{"ustacks_short", 1, noPrealloc, 16 + 512},
		{"ustacks_mid", 1, noPrealloc, 16 + 1024},
		{"ustacks", 1, noPrealloc, 16 + 4096},
		{"kstacks", 1, noPrealloc, 16 + 2048},
		{"counts0", 1, noPrealloc, 16 + 128},
		{"ustacks", 1, 0, 16 + 48 + 8 + 2064},
		{"ustacks_short", 4000000, noPrealloc, 67108864 + 4000000*512},
		{"ustacks_short", 3, noPrealloc, 4*16 + 3*512},
	} {
		m := spec.Maps[tc.name].Copy()
		m.MaxEntries, m.Flags = tc.entries, tc.flags
		if got := hashMapCost(m); got != tc.want {
			t.Errorf("%s, %d entries, flags %#x: %d bytes, want %d", tc.name, tc.entries, tc.flags, got, tc.want)
		}
	}
}

// README.md: where maps are preallocated the defaults take 24 MB of user
// stacks; a stack costs ~6.5 KiB when the maps are allocated on demand.
func TestStackMapsCost(t *testing.T) {
	for _, tc := range []struct {
		n          int
		prealloc   bool
		lo, hi     uint64
		sameAsZero bool
	}{
		{0, true, 35 << 20, 36 << 20, true},
		{PreallocMaxStacks, true, 35 << 20, 36 << 20, true},
		{65536, false, 423 << 20, 424 << 20, true},
		{100_000_000, false, 634 << 30, 635 << 30, false},
		{1, false, 1, 16 << 10, false},
	} {
		got := StackMapsCost(tc.n, tc.prealloc)
		if got < tc.lo || got > tc.hi {
			t.Errorf("n=%d prealloc=%v: %s, want %s to %s", tc.n, tc.prealloc, byteSize(got), byteSize(tc.lo), byteSize(tc.hi))
		}
		if zero := StackMapsCost(0, tc.prealloc); tc.sameAsZero != (zero == got) {
			t.Errorf("n=%d prealloc=%v: %d, the default %d", tc.n, tc.prealloc, got, zero)
		}
	}
}

func TestCheckMemory(t *testing.T) {
	const avail = 24 << 30
	for _, tc := range []struct {
		opts     Options
		prealloc bool
		avail    uint64
		want     string // "" for none
	}{
		{Options{}, false, avail, ""},
		{Options{}, false, 64 << 20, ""}, // the defaults are not refused
		{Options{DWARF: true}, false, 64 << 20, ""},
		{Options{MaxStacks: 1_000_000}, false, avail, ""},
		{Options{MaxStacks: 100_000_000}, false, avail, "--max-stacks 100000000: its maps take up to 634.4 GiB of kernel memory when full, " +
			"more than half of the 24.0 GiB available (MemAvailable in /proc/meminfo): the largest that fits is --max-stacks 1899283"},
		{Options{MaxStacks: 100_000_000, DWARF: true}, false, avail, "when full (and the unwind tables up to 256.0 MiB), more than half"},
		{Options{MaxStacks: 100_000_000}, true, avail, "the largest that fits is --max-stacks 5597588"},
		{Options{MaxStacks: 65536, DWARF: true, TableBudget: 1 << 30}, false, 1 << 30, "lower --unwind-budget or free some memory"},
		{Options{DWARF: true, TableBudget: 16 << 30}, false, avail, "--unwind-budget 16.0 GiB: with the stack maps (up to 423.2 MiB when full) that is more than half " +
			"of the 24.0 GiB available (MemAvailable in /proc/meminfo): the largest that fits is --unwind-budget 11864M"},
		{Options{TableBudget: 16 << 30}, false, avail, ""}, // no tables without DWARF
		{Options{MaxStacks: -1}, false, avail, "--max-stacks -1: want a number of stacks from 1 to 1073741824"},
	} {
		err := checkMemory(tc.opts, tc.prealloc, tc.avail)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.opts, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// The largest --max-stacks that fits does, and one more does not.
func TestLargestStacks(t *testing.T) {
	for _, room := range []uint64{1 << 20, 400 << 20, 12 << 30} {
		for _, prealloc := range []bool{false, true} {
			n := largestStacks(prealloc, room)
			if n < 1 || StackMapsCost(n, prealloc) > room || StackMapsCost(n+1, prealloc) <= room {
				t.Errorf("room %s prealloc %v: %d stacks (%d bytes, %d with one more)", byteSize(room), prealloc, n,
					StackMapsCost(n, prealloc), StackMapsCost(n+1, prealloc))
			}
		}
	}
	if n := largestStacks(false, 100); n != 0 {
		t.Errorf("100 bytes fit %d stacks", n)
	}
}

func TestMemAvailable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want uint64
		err  string
	}{
		{"MemTotal:       24683540 kB\nMemFree:        22792752 kB\nMemAvailable:   24308148 kB\n", 24308148 << 10, ""},
		{"MemTotal:       24683540 kB\n", 0, "no MemAvailable"},
		{"MemAvailable:   lots kB\n", 0, "MemAvailable: strconv.ParseUint"},
	} {
		path := filepath.Join(dir, "meminfo")
		os.WriteFile(path, []byte(tc.text), 0o644)
		got, err := memAvailable(path)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %d, %v; want %d, %q", tc.text, got, err, tc.want, tc.err)
		}
	}
}
