package vdso

import (
	"debug/elf"
	"testing"

	"github.com/probee/probee/internal/procmaps"
)

func TestImage(t *testing.T) {
	f, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range syms {
		found = found || (s.Name == "__vdso_clock_gettime" && elf.ST_TYPE(s.Info) == elf.STT_FUNC)
	}
	if !found {
		t.Errorf("no __vdso_clock_gettime in the image's %d dynamic symbols", len(syms))
	}
	if f.Section(".eh_frame") == nil {
		t.Error("the image has no .eh_frame")
	}
}

func TestMatches(t *testing.T) {
	img, err := Image()
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(img))
	for _, tc := range []struct {
		m    procmaps.Mapping
		want bool
	}{
		{procmaps.Mapping{Start: 0x7000, End: 0x7000 + n, Path: Path}, true},
		{procmaps.Mapping{Start: 0x7000, End: 0x7000 + n + 0x1000, Path: Path}, false}, // a 32-bit process's image
		{procmaps.Mapping{Start: 0x7000, End: 0x7000 + n, Path: "[vvar]"}, false},
	} {
		if got := Matches(tc.m); got != tc.want {
			t.Errorf("Matches(%+v) = %v, want %v", tc.m, got, tc.want)
		}
	}
}
