package unwind

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// minParseBytes is the least section size worth a parsing goroutine of its
// own (libLLVM-14's .eh_frame has 5 MB).
const minParseBytes = 512 << 10

// parseParts parses a well-formed section on n goroutines, for the result
// parse gives. A first pass walks the records by their lengths and ids,
// parsing each CIE where parse would (so CIEs come in the same order) and
// noting where the FDE records are; then ranges of FDE records are
// decoded on goroutines of their own straight into their places. The
// first thing wrong, in either pass, makes it report false: ParseCFI
// then parses again in one pass, for that pass's error and partial result.
func (p *frameParser) parseParts(n int) (*CFI, bool) {
	offs, ok := p.scan()
	if !ok {
		return nil, false
	}
	out := p.frames(make([]FDE, len(offs)))
	out.CIEs = p.order
	var failed atomic.Bool
	var wg sync.WaitGroup
	for k := range n {
		lo, hi := len(offs)*k/n, len(offs)*(k+1)/n
		wg.Go(func() {
			// A mapped section faults if its file shrinks: give up, and
			// let the single pass meet the fault on the caller's goroutine.
			debug.SetPanicOnFault(true)
			defer func() {
				if recover() != nil {
					failed.Store(true)
				}
			}()
			for i := lo; i < hi && !failed.Load(); i++ {
				if _, fde, isFDE, err := p.record(int(offs[i])); err != nil || !isFDE {
					failed.Store(true)
				} else {
					out.FDEs[i] = fde
				}
			}
		})
	}
	wg.Wait()
	return out, !failed.Load()
}

// scan walks the records and returns the offsets of the FDE records. It
// parses every CIE, those in records and those FDEs point to, when a
// single pass would: the FDE passes then only read the parser's CIEs.
func (p *frameParser) scan() ([]uint32, bool) {
	offs := make([]uint32, 0, len(p.data)/48)
	for off := 0; off < len(p.data); {
		r, id, idOff, is64, end, err := p.header(off)
		zero := r.buf == nil
		switch {
		case err != nil:
			return nil, false
		case zero && p.eh: // the .eh_frame terminator
			return offs, true
		case zero:
		case p.isCIE(id, is64):
			if _, err := p.cie(int64(off)); err != nil {
				return nil, false
			}
		default:
			cieOff, ok := p.cieOffset(id, idOff)
			if !ok {
				return nil, false
			}
			if _, err := p.cie(cieOff); err != nil {
				return nil, false
			}
			offs = append(offs, uint32(off)) // ParseCFI refuses sections of 4 GiB
		}
		off = end
	}
	return offs, true
}
