package unwind

import (
	"cmp"
	"slices"
)

// fdeList is the FDEs of several sections sorted by start, an FDE named
// by its section and index: a list without pointers besides the sections
// (libLLVM-14 has 95,000 FDEs; the garbage collector need not scan them).
type fdeList struct {
	frames []*Frames
	refs   []fdeRef
}

type fdeRef struct {
	start        uint64
	frame, index uint32 // frames[frame].FDEs[index]
}

// sortFDEs orders FDEs by start; of FDEs with the same start the first given
// (.eh_frame before .debug_frame) is kept. Empty FDEs are dropped.
func sortFDEs(frames []*Frames) *fdeList {
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

// at returns the i-th FDE and its section.
func (l *fdeList) at(i int) (*Frames, *FDE) {
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
