package unwind

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
)

// PadGap is the alignment of functions: a gap shorter than PadGap before an
// FDE that starts PadGap-aligned is alignment padding, and gets no
// end-of-function marker.
const PadGap = 16

// minPartFDEs is the fewest FDEs worth a goroutine of their own: below
// 2*minPartFDEs (libc has 3,000 FDEs, libLLVM-14 95,000) a table is built
// on the calling goroutine alone.
const minPartFDEs = 8192

// Build evaluates every FDE of the given sections (in priority order) into a
// merged table. A large input is evaluated in parts, ranges of FDEs one
// goroutine each (up to GOMAXPROCS), merged in order into the table a
// single pass would give, rule order included.
func Build(frames ...*Frames) (*Table, error) {
	fdes := sortFDEs(frames)
	return build(frames, fdes, min(runtime.GOMAXPROCS(0), len(fdes)/minPartFDEs))
}

// build evaluates fdes, sorted FDEs of frames, in nparts parts.
func build(frames []*Frames, fdes []*FDE, nparts int) (*Table, error) {
	if len(fdes) == 0 {
		return newBuilder(0, 0).finish()
	}
	bounds, weights := splitFDEs(fdes, max(nparts, 1))
	// The first part holds the whole table: the others are appended to it.
	capHint := entriesFor(sum(weights))
	if len(bounds) == 2 {
		return evalRange(fdes, 0, len(fdes), capHint).finish()
	}
	// CIEs compute their initial state on first use: compute it before the
	// parts share them.
	for _, fr := range frames {
		for _, c := range fr.CIEs {
			c.initialState()
		}
	}
	parts := make([]*builder, len(bounds)-1)
	var wg sync.WaitGroup
	for i := range parts {
		hint := capHint
		if i > 0 {
			hint = entriesFor(weights[i])
		}
		wg.Go(func() { parts[i] = evalPart(fdes, bounds[i], bounds[i+1], hint) })
	}
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
	}
	b := parts[0]
	for i, p := range parts[1:] {
		if err := b.appendPart(p, fdes[bounds[i+1]].Start); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// fdeWeight is what evaluating f costs, about: its instruction bytes and
// one.
func fdeWeight(f *FDE) int { return len(f.Instructions) + 1 }

// entriesFor is room for the entries of FDEs of the given weight, with some
// to spare: a table has about a quarter as many entries as its FDEs'
// weight (0.23 to 0.25 in libc, libstdc++, libLLVM-14, libclang-cpp 14
// and librustc_driver). A builder's entries grow past it if need be.
func entriesFor(weight int) int { return weight*5/16 + 16 }

// splitFDEs cuts fdes into n ranges of about equal weight; range i is
// fdes[bounds[i]:bounds[i+1]], of weight weights[i].
func splitFDEs(fdes []*FDE, n int) (bounds, weights []int) {
	total := 0
	for _, f := range fdes {
		total += fdeWeight(f)
	}
	bounds, weights = []int{0}, []int{0}
	sum := 0
	for i, f := range fdes {
		if len(bounds) < n && i > bounds[len(bounds)-1] && sum >= total*len(bounds)/n {
			bounds, weights = append(bounds, i), append(weights, 0)
		}
		sum += fdeWeight(f)
		weights[len(weights)-1] += fdeWeight(f)
	}
	return append(bounds, len(fdes)), weights
}

func sum(s []int) (n int) {
	for _, v := range s {
		n += v
	}
	return n
}

// sortFDEs orders FDEs by start; of FDEs with the same start the first given
// (.eh_frame before .debug_frame) is kept. Empty FDEs are dropped.
func sortFDEs(frames []*Frames) []*FDE {
	n := 0
	for _, fr := range frames {
		n += len(fr.FDEs)
	}
	all := make([]*FDE, 0, n)
	for _, fr := range frames {
		for i := range fr.FDEs {
			if f := &fr.FDEs[i]; f.End > f.Start {
				all = append(all, f)
			}
		}
	}
	byStart := func(a, b *FDE) int { return cmp.Compare(a.Start, b.Start) }
	if !slices.IsSortedFunc(all, byStart) {
		slices.SortStableFunc(all, byStart)
	}
	return slices.CompactFunc(all, func(a, b *FDE) bool { return a.Start == b.Start })
}

// evalPart is evalRange on a goroutine of its own. CFI read from a mapped
// file (BuildFile) faults when the file shrinks under it: the fault, or any
// panic, becomes the part's error, as safeelf.Guard makes it on the
// caller's goroutine.
func evalPart(fdes []*FDE, lo, hi, capHint int) (b *builder) {
	debug.SetPanicOnFault(true)
	defer func() {
		if r := recover(); r != nil {
			b = &builder{err: fmt.Errorf("evaluating FDEs %d to %d: %v", lo, hi-1, r)}
		}
	}()
	return evalRange(fdes, lo, hi, capHint)
}

// evalRange evaluates fdes[lo:hi] into a new builder with room for
// capHint entries; fdes[hi], when there is one, is the next FDE (for the
// end marker of fdes[hi-1]).
func evalRange(fdes []*FDE, lo, hi, capHint int) *builder {
	b := newBuilder(fdes[0].Start, capHint)
	var rows []Row
	var in interp
	for i := lo; i < hi && b.err == nil; i++ {
		f := fdes[i]
		b.stats.FDEs++
		var err error
		rows, err = in.rows(f, rows[:0])
		if err != nil {
			b.badFDE(f, err)
			rows = append(rows[:0], Row{PC: f.Start, Rule: ruleUnsupported})
		}
		b.clip(f.Start)
		next := uint64(math.MaxUint64)
		if i+1 < len(fdes) {
			next = fdes[i+1].Start
		}
		b.err = b.addFDE(f, rows, next)
	}
	return b
}

func (b *builder) badFDE(f *FDE, err error) {
	s := &b.stats
	s.BadFDEs++
	if s.FirstError == "" {
		s.FirstError = fmt.Sprintf("FDE at %#x (pc %#x..%#x): %v", f.Offset, f.Start, f.End, err)
	}
}

// addFDE adds the rows of f and its end marker. The marker is left out when
// the next FDE starts within alignment padding (less than PadGap bytes later):
// padding is never executed, and letting the last rule run over it lets
// adjacent functions with equal rules merge.
func (b *builder) addFDE(f *FDE, rows []Row, next uint64) error {
	for _, r := range rows {
		b.countRow(r.Rule)
		if err := b.add(r.PC, r.Rule); err != nil {
			return err
		}
	}
	if next >= f.End && next-f.End < PadGap && next%PadGap == 0 {
		return nil
	}
	return b.add(f.End, Rule{})
}

func (b *builder) countRow(r Rule) {
	s := &b.stats
	s.Rows++
	switch r.CFA {
	case CFAPLT:
		s.PLTRows++
	case CFASignal:
		s.SignalRows++
	case CFAEndOfStack:
		s.EndRows++
	case CFAUnsupported:
		s.Unsupported++
	}
}

// add sums the counts of o into s; s keeps its FirstError if it has one.
func (s *Stats) add(o *Stats) {
	first := s.FirstError
	if first == "" {
		first = o.FirstError
	}
	*s = Stats{FDEs: s.FDEs + o.FDEs, Rows: s.Rows + o.Rows, PLTRows: s.PLTRows + o.PLTRows,
		SignalRows: s.SignalRows + o.SignalRows, EndRows: s.EndRows + o.EndRows,
		Unsupported: s.Unsupported + o.Unsupported, BadFDEs: s.BadFDEs + o.BadFDEs,
		Overlaps: s.Overlaps + o.Overlaps, FirstError: first}
}
