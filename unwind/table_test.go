package unwind

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/fileid"
)

func libcTable(t testing.TB) (*Table, string) {
	p := systemLib("libc.so.6")
	if p == "" {
		t.Skip("libc.so.6 not found")
	}
	tab, err := BuildFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return tab, p
}

func TestCacheSharesByBuildID(t *testing.T) {
	_, p := libcTable(t)
	if id, err := fileid.Of(p); err != nil || id.BuildID == "" {
		t.Skipf("libc has no build-id (%v)", err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "libc-copy.so")
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := NewCache()
	a, err := c.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Get(cp)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || c.Len() != 1 {
		t.Fatalf("same build-id built twice (%p %p, %d tables)", a, b, c.Len())
	}
	if _, err := c.Get(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file accepted")
	}
}

func TestEndMarkers(t *testing.T) {
	p := systemLib("libc.so.6")
	if p == "" {
		t.Skip("libc.so.6 not found")
	}
	ef, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	data, addr, err := frameSection(ef, EhFrame, readSection)
	if err != nil || data == nil {
		t.Fatalf("no .eh_frame: %v", err)
	}
	fr, err := ParseFrames(EhFrame, data, bases(ef, addr))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	fdes := sortFDEs([]*Frames{fr})
	checked := 0
	for i := range fdes.len() {
		_, f := fdes.at(i)
		if i+1 < fdes.len() {
			next := fdes.start(i + 1)
			if next == f.End || (next < f.End+PadGap && next%PadGap == 0) {
				continue // next function or alignment padding
			}
		}
		checked++
		if r, ok := tab.Lookup(f.End); ok {
			t.Errorf("pc %#x just past FDE %#x..%#x has rule %v, want none", f.End, f.Start, f.End, r)
		}
	}
	t.Logf("%d of %d function ends have an end marker", checked, fdes.len())
}
