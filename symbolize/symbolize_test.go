package symbolize

import (
	"reflect"
	"slices"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
	"github.com/probee/probee/objfile"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/proctrack"
)

func TestSymbolizerAfterExit(t *testing.T) {
	cmd, bin := maptest.StartSpin(t)
	pid := cmd.Process.Pid
	sym := New(Config{})
	if err := sym.History().Snapshot(pid); err != nil {
		t.Fatal(err)
	}
	leaf := resolveOK(t, uspec(pathT(bin), probespec.MatchExact, "spin_leaf"))[0]
	malloc := resolveOK(t, uspec(libT("c"), probespec.MatchExact, "malloc"))[0]
	base := func(path string, fileOff uint64) uint64 {
		for _, m := range sym.History().Mappings(pid, "", nil) {
			if maptest.SameFile(m.Path, path) && fileOff >= m.Offset && fileOff-m.Offset < m.End-m.Start {
				return m.Start + fileOff - m.Offset
			}
		}
		t.Fatalf("%s+0x%x not mapped", path, fileOff)
		return 0
	}
	addrs := []uint64{base(bin, leaf.FileOffset) + 3, base(malloc.Path, malloc.FileOffset), 0x10}
	cmd.Process.Kill()
	cmd.Wait()
	fs := sym.Frames(pid, "", addrs)
	if fs[0].Name != "spin_leaf" || fs[0].Address != leaf.Address+3 || fs[1].Name != "malloc" || frameName(fs[2]) != "0x10" {
		t.Errorf("frames = %+v", fs)
	}
}

func TestFrameNames(t *testing.T) {
	o, err := objfile.LoadObject(maptest.Fixture(t, "cxx"), "")
	if err != nil {
		t.Fatal(err)
	}
	cxx := maptest.FileMapping(t, o.Path, o.Path, 0x1000)
	cxx.End = 0x100000
	p := imageOf(t, cxx, procmaps.Mapping{Start: 0x200000, End: 0x201000, Perms: "r-xp", Path: "[vdso]"})
	var method uint64
	for i, s := range o.Funcs {
		if full, _ := o.DemangledName(i); full == "ns::Klass::method(int)" {
			method = s.Addr
		}
	}
	off, _ := o.FileOffset(method)
	got := []string{frameName(frameAt(p, 0x1000+off-0)), frameName(frameAt(p, 0x200010)), frameName(frameAt(p, 0x1000+0x5)), frameName(frameAt(p, 0x5))}
	want := []string{"ns::Klass::method(int)", "[vdso]+0x10", "cxx+0x5", "0x5"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestKernelFrames(t *testing.T) {
	sym := New(Config{Kallsyms: "testdata/kallsyms"})
	fs := sym.KernelFrames([]uint64{0xffffffff81100010, 0xffffffffc0000104, 0x10})
	if frameName(fs[0]) != "vfs_read" || fs[0].Address != 0xffffffff81100010 || fs[0].Offset != 0 || fs[0].Module != "[kernel]" ||
		frameName(fs[1]) != "ext4_file_read_iter" || fs[1].Module != "[ext4]" || frameName(fs[2]) != "[kernel]+0x10" {
		t.Errorf("kernel frames = %+v", fs)
	}
}

// A frame in a process's [vdso] mapping is named from the kernel's vDSO
// image, by its "__vdso_" name rather than the plain alias.
func TestVDSOFrames(t *testing.T) {
	o := vdsoObject()
	if o == nil {
		t.Fatal("the vDSO image cannot be read")
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Name == "__vdso_clock_gettime" })
	if i < 0 {
		t.Fatal("no __vdso_clock_gettime in the vDSO's symbols")
	}
	img, _ := vdso.Image()
	const start = 0x7fff00000000
	p := imageOf(t, procmaps.Mapping{Start: start, End: start + uint64(len(img)), Perms: "r-xp", Path: vdso.Path})
	fr := frameAt(p, start+o.Funcs[i].Addr+2)
	if frameName(fr) != "__vdso_clock_gettime" || fr.Address != o.Funcs[i].Addr+2 || fr.Module != vdso.Path {
		t.Errorf("frame = %+v, want __vdso_clock_gettime+2 in [vdso]", fr)
	}
}

// A function's frame carries the same Address (its address in the ELF
// file) in two processes that load the file at different addresses; where
// no object holds the address, the process's own address.
func TestFrameAddressInFile(t *testing.T) {
	o, err := objfile.LoadObject(maptest.Fixture(t, "cxx"), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Size > 4 })
	if i < 0 {
		t.Fatal("no function in the fixture")
	}
	va := o.Funcs[i].Addr + 2
	off, _ := o.FileOffset(va)
	var got []uint64
	for _, start := range []uint64{0x1000, 0x7f0000001000} {
		m := maptest.FileMapping(t, o.Path, o.Path, start)
		m.End = start + 0x100000
		p := imageOf(t, m)
		got = append(got, frameAt(p, start+off).Address, frameAt(p, start+0x200000).Address)
	}
	if want := []uint64{va, 0x201000, va, 0x7f0000201000}; !slices.Equal(got, want) {
		t.Errorf("Address at two load addresses = %#x, want %#x", got, want)
	}
}

// imageOf is the image of a process, unknown to /proc, that maps maps.
func imageOf(t *testing.T, maps ...procmaps.Mapping) *proctrack.Image {
	t.Helper()
	const pid = 1 << 30 // no process has it
	h := New(Config{}).History()
	h.SnapshotMaps(pid, maps, "")
	return h.ImageOf(pid, "", nil)
}

// frameAt is the frame g names addr with, without inline frames.
func frameAt(g *proctrack.Image, addr uint64) output.Frame {
	f, _, _ := locate(g, addr)
	return f
}
