package symbolize

import (
	"slices"
	"testing"
	"time"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// After the History's sweep, the next use of the Symbolizer lets go of the
// frames of files no known process maps (Evictions changes); the frames of
// files still mapped stay.
func TestSweepEvictsUnmappedFiles(t *testing.T) {
	names := []string{"cxx", "chain-fp"}
	const pid0 = 1 << 30 // pids no process has: one per file
	for _, c := range []struct {
		name   string
		forget []int // indexes of names whose process is forgotten
	}{
		{"all mapped", nil},
		{"one forgotten", []int{0}},
		{"all forgotten", []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{})
			var objs []*objfile.Object
			for i, name := range names {
				o, err := s.idx.Load(maptest.Fixture(t, name))
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, o)
				fi := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Size > 4 })
				off, _ := o.FileOffset(o.Funcs[fi].Addr + 2)
				const start = 0x400000
				m := maptest.FileMapping(t, o.Path, o.Path, start)
				s.History().SnapshotMaps(pid0+i, []procmaps.Mapping{m}, "")
				if fr := s.AppendFrameRefs(nil, pid0+i, "", []uint64{start + off}); len(fr) == 0 || fr[0].Name == "" {
					t.Fatalf("%s: no frame at a function", name)
				}
			}
			for _, i := range c.forget {
				s.History().Forget(pid0 + i)
			}
			before := s.Evictions()
			s.History().Prune(time.Hour, func(int) bool { return false }) // the first Prune sweeps
			evicted := s.Evictions() != before
			memo := map[*objfile.Object]int{}
			for at := range s.objMemo.frames {
				memo[at.o]++
			}
			for i, o := range objs {
				if kept := !slices.Contains(c.forget, i); (memo[o] > 0) != kept {
					t.Errorf("%s: %d memo entries; want kept %v", names[i], memo[o], kept)
				}
			}
			if evicted != (len(c.forget) > 0) {
				t.Errorf("Evictions changed: %v, want %v", evicted, len(c.forget) > 0)
			}
		})
	}
}

// The frames of addresses of pids unknown and gone (kept by the memo of
// unknown pids) go at each sweep.
func TestSweepDropsUnknownFrames(t *testing.T) {
	s := New(Config{})
	const gone = 1<<30 + 7 // no process has it, none had
	first := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234})
	if again := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234}); again[0] != first[0] {
		t.Fatal("an unknown address was not kept until the sweep")
	}
	before := s.Evictions()
	s.History().Prune(time.Hour, func(int) bool { return false }) // the first Prune sweeps
	if s.Evictions() == before || s.unknown != nil {
		t.Errorf("after a sweep: memo of unknown pids %v, Evictions %d (was %d)", s.unknown != nil, s.Evictions(), before)
	}
	if after := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234}); after[0] == first[0] || after[0].Address != 0x1234 {
		t.Errorf("after a sweep the unknown address gave %+v, the frame kept before or another address", *after[0])
	}
}
