package symbolize

import (
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
	"slices"
	"testing"
)

// A sweep lets go of what is kept per file once no known process maps
// the file: its frames in the memo, its byFile entry, and, at the second
// sweep that finds it unused, the Index's object and its symbols. Files
// still mapped keep all of it.
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
				o, err := s.idx.Load(fixture(t, name))
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, o)
				fi := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Size > 4 })
				off, _ := o.FileOffset(o.Funcs[fi].Addr + 2)
				const start = 0x400000
				m := procmaps.Mapping{Start: start, End: start + 0x100000, Perms: "r-xp", Path: o.Path, Dev: "08:01", Inode: uint64(i + 1)}
				s.procs[pid0+i] = &procMaps{maps: []procmaps.Mapping{m}, open: map[string]*objfile.Object{o.Path: o},
					seen: true, read: true, loaded: true}
				s.byFile[m.FileKey()] = o
				if fr := s.AppendFrameRefs(nil, pid0+i, "", []uint64{start + off}); len(fr) == 0 || fr[0].Function == "" {
					t.Fatalf("%s: no frame at a function", name)
				}
			}
			held := s.idx.NumSymbols()
			for _, i := range c.forget {
				s.Forget(pid0 + i)
			}
			before := s.Evictions()
			s.sweep()
			s.sweep()
			memo := map[*objfile.Object]int{}
			for at := range s.objMemo.frames {
				memo[at.o]++
			}
			files := map[*objfile.Object]bool{}
			for _, o := range s.byFile {
				files[o] = true
			}
			var heldGone int
			for i, o := range objs {
				kept := !slices.Contains(c.forget, i)
				if (memo[o] > 0) != kept || files[o] != kept {
					t.Errorf("%s: %d memo entries, in byFile %v; want kept %v", names[i], memo[o], files[o], kept)
				}
				if !kept {
					heldGone += o.NumSymbols()
				}
			}
			if n, want := s.idx.Len(), len(names)-len(c.forget); n != want {
				t.Errorf("the Index holds %d objects, want %d", n, want)
			}
			if n := s.idx.NumSymbols(); n != held-heldGone {
				t.Errorf("the Index counts %d symbols held, want %d", n, held-heldGone)
			}
			if evicted := s.Evictions() != before; evicted != (len(c.forget) > 0) {
				t.Errorf("Evictions changed: %v, want %v", evicted, len(c.forget) > 0)
			}
		})
	}
}

// The frames of addresses of pids unknown and gone (kept by the memo of
// the empty set) go at each sweep.
func TestSweepDropsUnknownFrames(t *testing.T) {
	s := New(Config{})
	const gone = 1<<30 + 7 // no process has it, none had
	first := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234})
	if again := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234}); again[0] != first[0] {
		t.Fatal("an unknown address was not kept until the sweep")
	}
	before := s.Evictions()
	s.sweep()
	if s.unknown.memo != nil || s.Evictions() == before {
		t.Errorf("after a sweep: memo of unknown pids %v, Evictions %d (was %d)", s.unknown.memo != nil, s.Evictions(), before)
	}
	if after := s.AppendFrameRefs(nil, gone, "", []uint64{0x1234}); after[0] == first[0] || after[0].Addr != 0x1234 {
		t.Errorf("after a sweep the unknown address gave %+v, the frame kept before or another address", *after[0])
	}
}
