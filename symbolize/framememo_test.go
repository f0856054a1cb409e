package symbolize

import (
	"slices"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
)

// AppendFrameRefs gives AppendFrames' frames, the same pointers for an
// address every time and in every process mapping the file (Addr being
// the address in the file), and symbolizes again once the mapping set,
// the perf map or SetInline changed.
func TestAppendFrameRefs(t *testing.T) {
	j := newFakeJIT(t) // pid 7, with a perf map
	bin := j.path("/usr/bin/cxx")
	installFixture(t, "cxx", bin)
	o, err := objfile.LoadObject(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Size > 4 })
	va := o.Funcs[i].Addr + 2
	off, _ := o.FileOffset(va)
	s := j.sym
	const a, b = 7, 1 << 30 // b: a pid no process has
	starts := map[int]uint64{a: 0x1000, b: 0x7f0000101000}
	for pid, start := range starts {
		s.History().SnapshotMaps(pid, []procmaps.Mapping{maptest.FileMapping(t, bin, "/usr/bin/cxx", start)}, "")
	}
	refs := func(pid int, addrs ...uint64) []*output.Frame { return s.AppendFrameRefs(nil, pid, "", addrs) }
	const outside = 0x500000000
	first := refs(a, starts[a]+off, outside)
	want := s.Frames(a, "", []uint64{starts[a] + off, outside})
	if len(first) != len(want) || first[0].Name != want[0].Name || first[0].Address != va ||
		frameName(*first[len(first)-1]) != "0x500000000" {
		t.Fatalf("refs = %+v, want %+v with Address %#x", deref(first), want, va)
	}
	if again := refs(a, starts[a]+off, outside); !slices.Equal(again, first) {
		t.Errorf("the same addresses gave other frames")
	}
	if inB := refs(b, starts[b]+off); inB[0] != first[0] {
		t.Errorf("a file's frame at another load address was symbolized again")
	}
	s.History().AddMapping(a, procmaps.Mapping{Start: outside, End: outside + 0x1000, Perms: "r-xp"})
	if f := refs(a, outside)[0]; f == first[len(first)-1] || f.Module != "[anon]" {
		t.Errorf("after a new mapping, the frame at it = %+v, want one in [anon]", *f)
	}
	const jit = 0x600000000
	unnamed := refs(a, jit)[0]
	j.appendMap("600000000 10 JS:f\n")
	if f := refs(a, jit)[0]; f == unnamed || f.Name != "JS:f" {
		t.Errorf("after the perf map grew, the frame at its new line = %+v, want JS:f", *f)
	}
	s.SetInline(false)
	if refs(b, starts[b]+off)[0] == first[0] {
		t.Errorf("frames symbolized with inline frames on were kept after SetInline(false)")
	}
}

func deref(fs []*output.Frame) []output.Frame {
	out := make([]output.Frame, len(fs))
	for i, f := range fs {
		out[i] = *f
	}
	return out
}
