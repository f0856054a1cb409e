package unwind

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/probee/probee/internal/safeelf"
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
func Build(frames ...*CFI) (*Table, error) { return buildSorted(sortFDEs(frames)) }

// buildSorted is Build of FDEs already sorted.
func buildSorted(fdes *fdeList) (*Table, error) {
	return build(fdes, min(runtime.GOMAXPROCS(0), fdes.len()/minPartFDEs))
}

// build evaluates fdes in nparts parts.
//
// The entries of all parts go to one array sized for the whole table,
// part i from the estimated end of the parts before it on, so that joining
// them moves entries down within memory already touched rather than into
// fresh pages (each costs a page fault, as much as evaluating a few dozen
// rows). A part that outgrows its region moves to an array of its own.
func build(fdes *fdeList, nparts int) (*Table, error) {
	if fdes.len() == 0 {
		return newBuilder(0, nil).finish()
	}
	bounds, weights := fdes.split(max(nparts, 1))
	buf := make([]Entry, 0, entriesFor(sum(weights)))
	if len(bounds) == 2 {
		return evalRange(fdes, 0, fdes.len(), buf).finish()
	}
	regions := make([]int, len(bounds)) // part i's region: buf[regions[i]:regions[i+1]]
	for i := 1; i < len(regions); i++ {
		regions[i] = entriesFor(sum(weights[:i]))
	}
	parts := evalParts(fdes, bounds, buf, regions)
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
	}
	b := parts[0]
	if startsAt(b.entries, buf, 0) {
		b.entries = buf[:len(b.entries)] // the later regions are its to fill
	}
	for k := 1; k < len(parts); k++ {
		if startsAt(b.entries, buf, 0) && overruns(parts, regions, buf, k, len(b.entries)) {
			b.entries = append(make([]Entry, 0, cap(buf)), b.entries...)
		}
		if err := b.appendPart(parts[k], fdes.start(bounds[k])); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

// evalParts evaluates the ranges of fdes between bounds, each on a
// goroutine of its own, into its region of buf.
func evalParts(fdes *fdeList, bounds []int, buf []Entry, regions []int) []*builder {
	// CIEs compute their initial state on first use: compute it before the
	// parts share them.
	for _, fr := range fdes.frames {
		for _, c := range fr.CIEs {
			c.initialState()
		}
	}
	parts := make([]*builder, len(bounds)-1)
	var wg sync.WaitGroup
	for i := range parts {
		region := buf[regions[i]:regions[i]:regions[i+1]]
		wg.Go(func() { parts[i] = evalPart(fdes, bounds[i], bounds[i+1], region) })
	}
	wg.Wait()
	return parts
}

// overruns reports whether joining parts[k] to a table of n entries at the
// start of buf would overwrite entries not read yet: those of a later part
// still in its region, or of parts[k] itself ahead of where they are read
// (the table ran into its region: a region estimated short).
func overruns(parts []*builder, regions []int, buf []Entry, k, n int) bool {
	if startsAt(parts[k].entries, buf, regions[k]) && n > regions[k] {
		return true
	}
	end := n + len(parts[k].entries)
	for j := k + 1; j < len(parts); j++ {
		if startsAt(parts[j].entries, buf, regions[j]) && end > regions[j] {
			return true
		}
	}
	return false
}

// startsAt reports whether s is still in buf, at index i.
func startsAt(s, buf []Entry, i int) bool {
	return cap(s) > 0 && i < cap(buf) && &s[:1][0] == &buf[:i+1][i]
}

// evalPart is evalRange on a goroutine of its own. CFI read from a mapped
// file (BuildFile) faults when the file shrinks under it: the fault, or any
// panic, becomes the part's error, as safeelf.Guard makes it on the
// caller's goroutine.
func evalPart(fdes *fdeList, lo, hi int, entries []Entry) (b *builder) {
	debug.SetPanicOnFault(true)
	defer func() {
		if r := recover(); r != nil {
			b = &builder{err: fmt.Errorf("evaluating FDEs %d to %d: %v", lo, hi-1, r)}
		}
	}()
	return evalRange(fdes, lo, hi, entries)
}

// evalRange evaluates fdes[lo:hi] into a new builder that appends its
// entries to entries; fdes[hi], when there is one, is the next FDE (for the
// end marker of fdes[hi-1]).
func evalRange(fdes *fdeList, lo, hi int, entries []Entry) *builder {
	b := newBuilder(fdes.start(0), entries)
	var rows []Row
	var in interp
	for i := lo; i < hi && b.err == nil; i++ {
		fr, f := fdes.at(i)
		b.stats.FDEs++
		var err error
		rows, err = in.rows(fr, f, rows[:0])
		if err != nil {
			b.badFDE(f, err)
			rows = append(rows[:0], Row{PC: f.Start, Rule: ruleUnsupported})
		}
		b.clip(f.Start)
		next := uint64(math.MaxUint64)
		if i+1 < fdes.len() {
			next = fdes.start(i + 1)
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
	if b.stats.Rows+len(rows) > MaxRows {
		return fmt.Errorf("more than %d rows are %w (unwind.MaxRows): no table", MaxRows, safeelf.ErrBudget)
	}
	for i := range rows {
		r := &rows[i]
		b.countRow(r.Rule.CFA)
		j, err := b.rules.of(&r.Rule)
		if err != nil {
			return err
		}
		b.addIndex(r.PC, j)
	}
	if next >= f.End && next-f.End < PadGap && next%PadGap == 0 {
		return nil
	}
	return b.add(f.End, Rule{})
}

func (b *builder) countRow(cfa CFAType) {
	s := &b.stats
	s.Rows++
	switch cfa {
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
