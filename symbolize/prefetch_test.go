package symbolize

import (
	"slices"
	"testing"
)

// Prefetch gives the frames AppendFrameRefs gives alone (names, source
// lines), and leaves no DWARF read: AppendFrameRefs then takes the frames
// from the memo without reading it again.
func TestPrefetch(t *testing.T) {
	g := newGenRoot(t)
	g.process(70, "sh", g.sh)
	addrs := []uint64{g.spinAt, g.spinAt + 4, genBase + 0x10}
	alone := New(Config{Root: g.root})
	want := frameValues(alone.AppendFrameRefs(nil, 70, "sh", addrs))
	if want[0].Line == 0 {
		t.Fatalf("no source line for spin_leaf: %+v", want[0])
	}
	s := New(Config{Root: g.root})
	s.Prefetch(slices.Values([]Stack{{PID: 70, Comm: "sh", PCs: addrs}}))
	o := s.procs[70].open[g.sh.Path]
	if o == nil {
		t.Fatal("no object for sh")
	}
	if o.HoldsDWARF() {
		t.Error("Prefetch kept sh's DWARF")
	}
	got := frameValues(s.AppendFrameRefs(nil, 70, "sh", addrs))
	if o.HoldsDWARF() {
		t.Error("AppendFrameRefs read sh's DWARF again after Prefetch")
	}
	if !slices.Equal(got, want) {
		t.Errorf("after Prefetch:\n%+v\nwant\n%+v", got, want)
	}
}

func frameValues(refs []*Frame) []Frame {
	out := make([]Frame, len(refs))
	for i, r := range refs {
		out[i] = *r
	}
	return out
}
