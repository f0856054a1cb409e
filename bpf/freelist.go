package bpf

import (
	"slices"
	"time"
)

// The ranges of the table storage that released tables leave (tables.go:
// ForgetFiles). A walk that started before a table was released may still
// read it, so its range is reusable only once its grace has passed
// (tableGrace, and an RCU grace period: tableStore.waitWalks); until then it
// waits in pending.

// tableGrace is how long a released table's range waits before it is
// reused: far longer than a walk takes (microseconds), and shorter than
// proctrack's sweeps are apart (10 s), so that the next sweep finds it due.
const tableGrace = 5 * time.Second

// span is the storage elements [start, end).
type span struct{ start, end uint64 }

func (s span) len() uint64 { return s.end - s.start }

// releasedSpan is a released table's range and when it was released.
type releasedSpan struct {
	span
	at time.Time
}

// freeList is the table storage's free ranges below its end (the element
// tables are appended at).
type freeList struct {
	free    []span         // reusable: sorted, no two touching (coalesced)
	pending []releasedSpan // released, in their grace; in release order
}

// release adds sp, released at now, to the pending ranges.
func (f *freeList) release(sp span, now time.Time) {
	f.pending = append(f.pending, releasedSpan{sp, now})
}

// due reports whether a pending range's grace has passed at now.
func (f *freeList) due(now time.Time) bool {
	return len(f.pending) > 0 && now.Sub(f.pending[0].at) >= tableGrace
}

// promote makes the pending ranges whose grace has passed at now
// reusable, and returns the storage's end: lowered to the start of a free
// range that reaches end (nothing lies past it).
func (f *freeList) promote(now time.Time, end uint64) uint64 {
	n := 0
	for n < len(f.pending) && now.Sub(f.pending[n].at) >= tableGrace {
		f.add(f.pending[n].span)
		n++
	}
	f.pending = slices.Delete(f.pending, 0, n)
	if k := len(f.free); k > 0 && f.free[k-1].end == end {
		end = f.free[k-1].start
		f.free = f.free[:k-1]
	}
	return end
}

// add makes sp free, merged with the free ranges it touches.
func (f *freeList) add(sp span) {
	i, _ := slices.BinarySearchFunc(f.free, sp.start, func(s span, start uint64) int {
		switch {
		case s.start < start:
			return -1
		case s.start > start:
			return 1
		}
		return 0
	})
	if i < len(f.free) && f.free[i].start == sp.end {
		sp.end = f.free[i].end
		f.free = slices.Delete(f.free, i, i+1)
	}
	if i > 0 && f.free[i-1].end == sp.start {
		f.free[i-1].end = sp.end
		return
	}
	f.free = slices.Insert(f.free, i, sp)
}

// find finds the first free range where a table fits (first fit): laid
// out from a range's start, the table ends at end(start), which must be
// within the range; a range shorter than least is passed over without
// laying the table out. It returns the elements the table would take,
// [start, end(start)); false: it fits in none.
func (f *freeList) find(least uint64, end func(start uint64) uint64) (span, bool) {
	for _, sp := range f.free {
		if sp.len() < least {
			continue
		}
		if e := end(sp.start); e <= sp.end {
			return span{sp.start, e}, true
		}
	}
	return span{}, false
}

// take removes sp, which find returned, from the free ranges.
func (f *freeList) take(sp span) {
	for i, fr := range f.free {
		if fr.start != sp.start {
			continue
		}
		if sp.end >= fr.end {
			f.free = slices.Delete(f.free, i, i+1)
		} else {
			f.free[i].start = sp.end
		}
		return
	}
}

// elems is the number of elements the ranges hold, free and pending.
func (f *freeList) elems() (free, pending uint64) {
	for _, sp := range f.free {
		free += sp.len()
	}
	for _, sp := range f.pending {
		pending += sp.len()
	}
	return free, pending
}
