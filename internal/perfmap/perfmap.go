// Package perfmap reads the perf maps JIT compilers write
// (/tmp/perf-PID.map: "START SIZE NAME" lines, hex), the names of the code
// they put in anonymous memory: the parser (perfmap.go) and one process's
// map as it is read over the process's life (Map, map.go: opened when the
// process is first seen, kept open after it exits, read again for the
// lines appended, within budgets). Package proctrack opens and keeps them
// with the processes' mapping history; package symbolize names JIT
// frames from them. Written here: tiny, and it must never panic on what a
// process writes.
package perfmap

import (
	"bytes"
	"container/heap"
	"sort"
	"strconv"
)

// Symbol is one line of a perf map: code at [Start, Start+Size) is Name.
// Seq orders lines as they appear in the file (later lines win).
type Symbol struct {
	Start, Size uint64
	Name        string
	Seq         int
}

// maxPerfLine bounds one perf map line; longer lines are skipped whole.
const maxPerfLine = 64 << 10

// parsePerfMap parses perf map text, "START SIZE NAME" lines with START and
// SIZE in hex (an optional 0x prefix is accepted) and NAME the rest of the
// line, spaces included. Malformed lines, empty names, zero sizes and ranges
// past the end of the address space are skipped. Only lines ending in '\n'
// are taken unless final is set (the writer may be between two writes of
// one line); consumed is how many bytes of b the taken lines span. seq
// numbers the first entry.
func parsePerfMap(b []byte, final bool, seq int) (syms []Symbol, consumed int) {
	for consumed < len(b) {
		line := b[consumed:]
		n := bytes.IndexByte(line, '\n')
		if n < 0 {
			if !final {
				break
			}
			n = len(line)
		} else {
			line = line[:n]
			n++
		}
		consumed += n
		if len(line) > maxPerfLine {
			continue
		}
		if s, ok := parsePerfLine(line); ok {
			s.Seq = seq + len(syms)
			syms = append(syms, s)
		}
	}
	return syms, consumed
}

// parsePerfLine parses one line without its newline.
func parsePerfLine(line []byte) (Symbol, bool) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	start, rest, ok := hexField(line)
	if !ok {
		return Symbol{}, false
	}
	size, rest, ok := hexField(rest)
	if !ok || size == 0 || start+size < start || len(rest) == 0 {
		return Symbol{}, false
	}
	return Symbol{Start: start, Size: size, Name: string(rest)}, true
}

// hexField parses a hex number and returns what follows the spaces or tabs
// after it; the number must be followed by at least one.
func hexField(b []byte) (uint64, []byte, bool) {
	i := bytes.IndexAny(b, " \t")
	if i <= 0 {
		return 0, nil, false
	}
	num := b[:i]
	if len(num) > 2 && num[0] == '0' && (num[1] == 'x' || num[1] == 'X') {
		num = num[2:]
	}
	v, err := strconv.ParseUint(string(num), 16, 64)
	if err != nil {
		return 0, nil, false
	}
	return v, bytes.TrimLeft(b[i:], " \t"), true
}

// perfSeg is a piece of the address space named by one perf map line.
type perfSeg struct {
	start, end uint64
	sym        int // index in the syms the segments were built from
}

// perfSegments paints syms, in Seq order, onto disjoint sorted segments:
// where ranges overlap, the later line wins (code moved or replaced by the
// JIT reuses addresses). O(n log n): a sweep over every range boundary with
// the covering lines in a heap by Seq.
func perfSegments(syms []Symbol) []perfSeg {
	order := make([]int, len(syms))
	var bounds []uint64
	for i, s := range syms {
		order[i] = i
		bounds = append(bounds, s.Start, s.Start+s.Size)
	}
	sort.Slice(order, func(a, b int) bool { return syms[order[a]].Start < syms[order[b]].Start })
	sort.Slice(bounds, func(a, b int) bool { return bounds[a] < bounds[b] })
	var segs []perfSeg
	h := &seqHeap{syms: syms}
	next := 0
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		if lo == hi {
			continue
		}
		for ; next < len(order) && syms[order[next]].Start <= lo; next++ {
			heap.Push(h, order[next])
		}
		for h.Len() > 0 && syms[h.idx[0]].Start+syms[h.idx[0]].Size <= lo {
			heap.Pop(h)
		}
		if h.Len() == 0 {
			continue
		}
		top := h.idx[0]
		if n := len(segs); n > 0 && segs[n-1].sym == top && segs[n-1].end == lo {
			segs[n-1].end = hi
			continue
		}
		segs = append(segs, perfSeg{lo, hi, top})
	}
	return segs
}

// seqHeap is a max-heap of indexes into syms by Seq.
type seqHeap struct {
	syms []Symbol
	idx  []int
}

func (h *seqHeap) Len() int           { return len(h.idx) }
func (h *seqHeap) Less(i, j int) bool { return h.syms[h.idx[i]].Seq > h.syms[h.idx[j]].Seq }
func (h *seqHeap) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *seqHeap) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *seqHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// lookupSeg returns the index of the segment holding addr, or -1.
func lookupSeg(segs []perfSeg, addr uint64) int {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].end > addr })
	if i == len(segs) || addr < segs[i].start {
		return -1
	}
	return i
}
