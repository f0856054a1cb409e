package unwind

import (
	"cmp"
	"slices"
)

// fdeList is the FDEs of several sections sorted by start, an FDE named
// by its section and index: a list without pointers besides the sections
// (libLLVM-14 has 95,000 FDEs; the garbage collector need not scan them).
type fdeList struct {
	frames []*CFI
	refs   []fdeRef
}

type fdeRef struct {
	start        uint64
	frame, index uint32 // frames[frame].FDEs[index]
}

// sortFDEs orders FDEs by start; of FDEs with the same start the first given
// (.eh_frame before .debug_frame) is kept. Empty FDEs are dropped.
func sortFDEs(frames []*CFI) *fdeList {
	n := 0
	for _, fr := range frames {
		n += len(fr.FDEs)
	}
	l := &fdeList{frames: frames, refs: make([]fdeRef, 0, n)}
	for i, fr := range frames {
		for j := range fr.FDEs {
			if f := &fr.FDEs[j]; f.End > f.Start {
				l.refs = append(l.refs, fdeRef{f.Start, uint32(i), uint32(j)})
			}
		}
	}
	// By start, then in the order given (a stable sort, but pdqsort's
	// O(n log n): Go's stable sort took 5% of librustc_driver's build).
	byStart := func(a, b fdeRef) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.frame, b.frame), cmp.Compare(a.index, b.index))
	}
	if !slices.IsSortedFunc(l.refs, byStart) {
		slices.SortFunc(l.refs, byStart)
	}
	l.refs = slices.CompactFunc(l.refs, func(a, b fdeRef) bool { return a.start == b.start })
	return l
}

func (l *fdeList) len() int { return len(l.refs) }

// with returns the list with the FDEs of fr added after the others: a
// merge, where sorting all anew took 30 ms for libLLVM.
func (l *fdeList) with(fr *CFI) *fdeList {
	add := sortFDEs([]*CFI{fr}).refs
	k := uint32(len(l.frames))
	out := &fdeList{frames: append(slices.Clip(l.frames), fr), refs: make([]fdeRef, 0, len(l.refs)+len(add))}
	i := 0
	for _, r := range add {
		for ; i < len(l.refs) && l.refs[i].start <= r.start; i++ {
			out.refs = append(out.refs, l.refs[i])
		}
		if n := len(out.refs); n == 0 || out.refs[n-1].start != r.start {
			out.refs = append(out.refs, fdeRef{r.start, k, r.index})
		}
	}
	out.refs = append(out.refs, l.refs[i:]...)
	return out
}

// at returns the i-th FDE and its section.
func (l *fdeList) at(i int) (*CFI, *FDE) {
	r := l.refs[i]
	fr := l.frames[r.frame]
	return fr, &fr.FDEs[r.index]
}

func (l *fdeList) start(i int) uint64 { return l.refs[i].start }

// weight is what evaluating the i-th FDE costs, about: its instruction
// bytes and one.
func (l *fdeList) weight(i int) int {
	_, f := l.at(i)
	return int(f.ninstr) + 1
}

// entriesFor is room for the entries of FDEs of the given weight, with some
// to spare: a table has about a quarter as many entries as its FDEs'
// weight (0.23 to 0.25 in libc, libstdc++, libLLVM-14, libclang-cpp 14
// and librustc_driver). A builder's entries grow past it if need be.
func entriesFor(weight int) int { return weight*5/16 + 16 }

// split cuts the list into n ranges of about equal weight; range i is
// [bounds[i], bounds[i+1]), of weight weights[i].
func (l *fdeList) split(n int) (bounds, weights []int) {
	total := 0
	for i := range l.refs {
		total += l.weight(i)
	}
	bounds, weights = []int{0}, []int{0}
	sum := 0
	for i := range l.refs {
		if len(bounds) < n && i > bounds[len(bounds)-1] && sum >= total*len(bounds)/n {
			bounds, weights = append(bounds, i), append(weights, 0)
		}
		w := l.weight(i)
		sum += w
		weights[len(weights)-1] += w
	}
	return append(bounds, len(l.refs)), weights
}

func sum(s []int) (n int) {
	for _, v := range s {
		n += v
	}
	return n
}

// coverIndex tells whether an FDE covers a pc, for checking every
// function symbol of a file (libLLVM's 258,000) against its FDEs: random
// binary searches over FDEs scattered in memory took 25 ms there. full
// has a bit for each granule of 16 bytes from base that an FDE covers
// whole, which answers for a function that starts in it; other pcs take
// the search.
type coverIndex struct {
	l    *fdeList
	base uint64
	full []uint64
}

const (
	granuleShift = 4
	// maxGranules bounds the bitmap (1 MiB, 128 MiB of code); a wider
	// span is searched.
	maxGranules = 8 << 20
)

func (l *fdeList) coverIndex() coverIndex {
	x := coverIndex{l: l}
	if len(l.refs) == 0 {
		return x
	}
	// Each FDE's own granules, read in section order (sequential memory;
	// the sorted refs reach the FDEs at random): a function's first
	// granule is whole inside its FDE when it starts 16-aligned.
	x.base = l.refs[0].start &^ (1<<granuleShift - 1)
	end := x.base
	for _, fr := range l.frames {
		for i := range fr.FDEs {
			end = max(end, fr.FDEs[i].End)
		}
	}
	n := (end - x.base) >> granuleShift
	if n > maxGranules {
		return x
	}
	x.full = make([]uint64, n/64+1)
	for _, fr := range l.frames {
		for i := range fr.FDEs {
			if f := &fr.FDEs[i]; f.Start >= x.base && f.End > f.Start {
				x.fill(f.Start, f.End)
			}
		}
	}
	return x
}

// fill sets the bits of the granules [lo, hi) covers whole.
func (x coverIndex) fill(lo, hi uint64) {
	g := (lo - x.base + 1<<granuleShift - 1) >> granuleShift
	end := (hi - x.base) >> granuleShift
	for g < end {
		w, b := g/64, g%64
		n := min(64-b, end-g)
		x.full[w] |= (^uint64(0) >> (64 - n)) << b
		g += n
	}
}

// covers reports whether an FDE covers pc (the last one starting at or
// before it), and where the next FDE starts (ok false: none does).
func (x coverIndex) covers(pc uint64) (covered bool, next uint64, ok bool) {
	if g := (pc - x.base) >> granuleShift; pc >= x.base && g/64 < uint64(len(x.full)) && x.full[g/64]&(1<<(g%64)) != 0 {
		return true, 0, false
	}
	i, _ := slices.BinarySearchFunc(x.l.refs, pc+1, func(r fdeRef, pc uint64) int { return cmp.Compare(r.start, pc) })
	if i > 0 {
		_, f := x.l.at(i - 1)
		covered = f.End > pc
	}
	if i < len(x.l.refs) {
		next, ok = x.l.refs[i].start, true
	}
	return covered, next, ok
}
