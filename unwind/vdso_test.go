package unwind

import (
	"debug/elf"
	"testing"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
)

// A process's [vdso] mapping gets the table of probee's own copy of the
// image, with the mapping's bias: __vdso_clock_gettime has a rule. A
// [vdso] of another size (a 32-bit process's) gets none, without an error.
func TestVDSOModule(t *testing.T) {
	img, err := vdso.Image()
	if err != nil {
		t.Fatal(err)
	}
	fn := vdsoFunc(t, "__vdso_clock_gettime")
	const start = 0x7fff12340000
	n := uint64(len(img))
	c := NewCache()
	mods, errs := c.Modules([]procmaps.Mapping{
		{Start: start, End: start + n, Perms: "r-xp", Path: VDSOPath},
		{Start: 0x1000, End: 0x1000 + 2*n, Perms: "r-xp", Path: VDSOPath},
	}, nil)
	if len(errs) != 0 || len(mods) != 1 {
		t.Fatalf("modules %+v, errors %v: want the first mapping's only", mods, errs)
	}
	m := mods[0]
	if m.Start != start || m.Bias != start || len(m.Table.Entries) == 0 {
		t.Errorf("module %+v (%d entries): want bias %#x and a table", m, len(m.Table.Entries), uint64(start))
	}
	if _, ok := m.Table.Lookup(fn + 1); !ok {
		t.Errorf("no rule at __vdso_clock_gettime+1 (%#x)", fn+1)
	}
	file, err := c.VDSOModule()
	if err != nil || file.Table != m.Table || file.Start != 0 || file.Bias != 0 {
		t.Errorf("VDSOModule = %+v, %v: want the same table at 0", file, err)
	}
}

// vdsoFunc is the address of the vDSO's function name.
func vdsoFunc(t *testing.T, name string) uint64 {
	t.Helper()
	f, err := vdso.Open()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value
		}
	}
	t.Fatalf("no %s in the vDSO", name)
	return 0
}
