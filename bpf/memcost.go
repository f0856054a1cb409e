package bpf

import (
	"bufio"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
)

// What --max-stacks and --unwind-budget cost, checked before anything is
// loaded (CheckMemory): --max-stacks 100000000 took a minute and 11 GB of
// kernel memory for the maps' bucket arrays alone, with no word.

// MemoryShare is the share of the memory available (MemAvailable) that the
// maps --max-stacks sizes, full, and the unwind table budget may take
// together: a value given past it is refused.
const MemoryShare = 2 // one half

// MaxStacksLimit bounds --max-stacks (map sizes are u32; far past any
// machine's memory at ~6.5 KiB a stack).
const MaxStacksLimit = 1 << 30

// stackMaps are the maps --max-stacks sizes (sizeStackMaps).
func stackMaps() []string {
	names := []string{"counts0", "counts1", "measures0", "measures1", "kstacks"}
	for _, c := range ustackClasses {
		names = append(names, c.name)
	}
	return names
}

// StackMapsCost is the kernel memory the maps --max-stacks sizes take for
// n stacks (0: the default) when they are full, preallocated or not.
func StackMapsCost(n int, prealloc bool) uint64 {
	spec := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}}
	for name, m := range mapSpecs().Maps {
		spec.Maps[name] = m.Copy()
	}
	sizeStackMaps(spec, n, prealloc)
	var sum uint64
	for _, name := range stackMaps() {
		sum += hashMapCost(spec.Maps[name])
	}
	return sum
}

// mapSpecs is the embedded object's maps (the same in both builds), read
// once: their kinds and sizes alone. Kept whole, the spec held the
// programs' instructions and the object's BTF for the rest of the run
// (3.6 MB of a system-wide run's live heap).
var mapSpecs = sync.OnceValue(func() *ebpf.CollectionSpec {
	spec, err := loadProbee()
	if err != nil {
		panic(fmt.Sprintf("load the embedded bpf object: %v", err))
	}
	maps := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}}
	for name, m := range spec.Maps {
		maps.Maps[name] = &ebpf.MapSpec{Name: m.Name, Type: m.Type, KeySize: m.KeySize,
			ValueSize: m.ValueSize, MaxEntries: m.MaxEntries, Flags: m.Flags}
	}
	return maps
})

// hashMapCost is the kernel memory of the hash map m when full, as the
// kernel's htab lays it out: a power of two of 16-byte buckets, and
// elements of a 48-byte struct htab_elem and the key and value rounded up
// to 8 bytes; elements allocated on demand (BPF_F_NO_PREALLOC) also carry
// an 8-byte list node and take a kmalloc size class (a 256-pc user stack,
// 2128 bytes, takes 4 KiB).
func hashMapCost(m *ebpf.MapSpec) uint64 {
	n := uint64(m.MaxEntries)
	elem := 48 + roundUp8(m.KeySize) + roundUp8(m.ValueSize)
	if m.Flags&noPrealloc != 0 {
		elem = kmallocSize(elem + 8)
	}
	return 16*nextPow2(n) + n*elem
}

func roundUp8(n uint32) uint64 { return (uint64(n) + 7) &^ 7 }

func nextPow2(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len64(n-1)
}

// kmallocSize is the kmalloc size class an allocation of n bytes takes.
func kmallocSize(n uint64) uint64 {
	switch {
	case n > 64 && n <= 96:
		return 96
	case n > 128 && n <= 192:
		return 192
	}
	return max(nextPow2(n), 8)
}

// CheckMemory refuses, before anything is loaded, a --max-stacks
// (opts.MaxStacks) or --unwind-budget (opts.TableBudget, with DWARF) whose
// kernel memory, with the other's, is more than 1/MemoryShare of the
// memory available now. The error gives the cost and the largest value
// that fits. The defaults (0) are not refused; a machine whose
// /proc/meminfo cannot be read is not checked.
func CheckMemory(opts Options) error {
	avail, err := memAvailable("/proc/meminfo")
	if err != nil {
		return nil
	}
	return checkMemory(opts, !haveLazyPerfMaps() || opts.Compat.Prealloc, avail)
}

func checkMemory(opts Options, prealloc bool, avail uint64) error {
	if opts.MaxStacks < 0 || opts.MaxStacks > MaxStacksLimit {
		return fmt.Errorf("--max-stacks %d: want a number of stacks from 1 to %d", opts.MaxStacks, MaxStacksLimit)
	}
	limit := avail / MemoryShare
	maps := StackMapsCost(opts.MaxStacks, prealloc)
	var tables uint64
	if opts.DWARF {
		tables = tableBudget(opts)
	}
	if maps+tables <= limit {
		return nil
	}
	share := fmt.Sprintf("more than half of the %s available (MemAvailable in /proc/meminfo)", byteSize(avail))
	switch {
	case opts.MaxStacks > 0:
		msg := fmt.Sprintf("--max-stacks %d: its maps take up to %s of kernel memory when full", opts.MaxStacks, byteSize(maps))
		if tables > 0 {
			msg += fmt.Sprintf(" (and the unwind tables up to %s)", byteSize(tables))
		}
		msg += ", " + share
		if n := largestStacks(prealloc, limit-min(limit, tables)); n > 0 {
			return fmt.Errorf("%s: the largest that fits is --max-stacks %d", msg, n)
		}
		return fmt.Errorf("%s: lower --unwind-budget or free some memory", msg)
	case opts.TableBudget > 0 && opts.DWARF:
		msg := fmt.Sprintf("--unwind-budget %s: with the stack maps (up to %s when full) that is %s", byteSize(tables), byteSize(maps), share)
		if room := limit - min(limit, maps); room >= 1<<20 {
			return fmt.Errorf("%s: the largest that fits is --unwind-budget %dM", msg, room>>20)
		}
		return fmt.Errorf("%s: lower --max-stacks or free some memory", msg)
	}
	return nil // the defaults
}

// largestStacks is the largest --max-stacks whose maps take at most room
// (0: none).
func largestStacks(prealloc bool, room uint64) int {
	lo, hi := 0, MaxStacksLimit
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if StackMapsCost(mid, prealloc) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// memAvailable reads MemAvailable, in bytes, from a meminfo file.
func memAvailable(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemAvailable: %w", path, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemAvailable", path)
}
