package bpf

import (
	"slices"
	"testing"
	"time"
)

// A range released becomes free with its neighbours merged into one
// range, whatever the order the ranges come in.
func TestFreeListCoalesce(t *testing.T) {
	for _, c := range []struct {
		name string
		add  []span
		want []span
	}{
		{"apart", []span{{10, 20}, {30, 40}}, []span{{10, 20}, {30, 40}}},
		{"apart, out of order", []span{{30, 40}, {10, 20}}, []span{{10, 20}, {30, 40}}},
		{"after", []span{{10, 20}, {20, 30}}, []span{{10, 30}}},
		{"before", []span{{20, 30}, {10, 20}}, []span{{10, 30}}},
		{"between", []span{{10, 20}, {30, 40}, {20, 30}}, []span{{10, 40}}},
		{"next to one of two", []span{{10, 20}, {40, 50}, {20, 30}}, []span{{10, 30}, {40, 50}}},
		{"before the second", []span{{10, 20}, {40, 50}, {30, 40}}, []span{{10, 20}, {30, 50}}},
	} {
		var f freeList
		for _, sp := range c.add {
			f.add(sp)
		}
		if !slices.Equal(f.free, c.want) {
			t.Errorf("%s: free %v, want %v", c.name, f.free, c.want)
		}
	}
}

// A table goes in the first free range it fits in, laid out from the
// range's start (the padding it then needs counts), and takes only what
// it needs; it fits in none when every range is short.
func TestFreeListFind(t *testing.T) {
	pad := func(start uint64) uint64 { // a table of 10 elements that never starts at an odd one
		return start + start%2 + 10
	}
	for _, c := range []struct {
		name     string
		free     []span
		end      func(uint64) uint64
		found    span
		ok       bool
		leftFree []span
	}{
		{"the first that fits", []span{{0, 5}, {10, 30}, {40, 60}}, pad, span{10, 20}, true, []span{{0, 5}, {20, 30}, {40, 60}}},
		{"exactly", []span{{10, 20}, {40, 60}}, pad, span{10, 20}, true, []span{{40, 60}}},
		{"not with its padding", []span{{11, 21}, {40, 60}}, pad, span{40, 50}, true, []span{{11, 21}, {50, 60}}},
		{"in none", []span{{0, 5}, {11, 21}}, pad, span{}, false, []span{{0, 5}, {11, 21}}},
		{"no range", nil, pad, span{}, false, nil},
	} {
		f := freeList{free: slices.Clone(c.free)}
		end := func(start uint64) uint64 {
			for _, sp := range c.free {
				if sp.start == start && sp.len() < 10 {
					t.Errorf("%s: laid out in %v, shorter than the table", c.name, sp)
				}
			}
			return c.end(start)
		}
		got, ok := f.find(10, end)
		if got != c.found || ok != c.ok {
			t.Errorf("%s: found %v %v, want %v %v", c.name, got, ok, c.found, c.ok)
		}
		if ok {
			f.take(got)
		}
		if !slices.Equal(f.free, c.leftFree) {
			t.Errorf("%s: free after %v, want %v", c.name, f.free, c.leftFree)
		}
	}
}

// A released range is reusable only once tableGrace has passed since its
// release (a walk that started before may still read it): before, it is
// pending, and a table does not find it. Ranges released at different
// times are promoted each at its time, and a free range that reaches the
// storage's end lowers the end instead.
func TestFreeListGrace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	type release struct {
		sp span
		at time.Duration // after t0
	}
	for _, c := range []struct {
		name        string
		released    []release
		end         uint64 // the storage's end
		at          time.Duration
		due         bool
		wantFree    []span
		wantPending int
		wantEnd     uint64
	}{
		{"just released", []release{{span{0, 10}, 0}}, 100, 0, false, nil, 1, 100},
		{"a moment short of its grace", []release{{span{0, 10}, 0}}, 100, tableGrace - time.Nanosecond, false, nil, 1, 100},
		{"its grace passed", []release{{span{0, 10}, 0}}, 100, tableGrace, true, []span{{0, 10}}, 0, 100},
		{"the second not yet", []release{{span{0, 10}, 0}, {span{20, 30}, time.Second}}, 100, tableGrace, true, []span{{0, 10}}, 1, 100},
		{"both, merged", []release{{span{10, 20}, 0}, {span{0, 10}, time.Second}}, 100, tableGrace + time.Second, true, []span{{0, 20}}, 0, 100},
		{"at the end", []release{{span{0, 10}, 0}, {span{90, 100}, 0}}, 100, tableGrace, true, []span{{0, 10}}, 0, 90},
		{"at the end, merged", []release{{span{80, 90}, 0}, {span{90, 100}, 0}}, 100, tableGrace, true, nil, 0, 80},
		{"at the end, in its grace", []release{{span{90, 100}, 0}}, 100, time.Second, false, nil, 1, 100},
	} {
		var f freeList
		for _, r := range c.released {
			f.release(r.sp, t0.Add(r.at))
		}
		now := t0.Add(c.at)
		if due := f.due(now); due != c.due {
			t.Errorf("%s: due %v, want %v", c.name, due, c.due)
		}
		end := f.promote(now, c.end)
		if !slices.Equal(f.free, c.wantFree) || len(f.pending) != c.wantPending || end != c.wantEnd {
			t.Errorf("%s: free %v, %d pending, end %d; want %v, %d, %d", c.name, f.free, len(f.pending), end, c.wantFree, c.wantPending, c.wantEnd)
		}
		if _, ok := f.find(1, func(s uint64) uint64 { return s + 1 }); ok != (len(c.wantFree) > 0) {
			t.Errorf("%s: a table found a free range: %v, want %v", c.name, ok, len(c.wantFree) > 0)
		}
		if free, pending := f.elems(); free+pending != func() (n uint64) {
			for _, r := range c.released {
				n += r.sp.len()
			}
			return n - (c.end - end)
		}() {
			t.Errorf("%s: %d elements free and %d pending, want what was released and not past the end", c.name, free, pending)
		}
	}
}
