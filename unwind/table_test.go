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

// One file reached by two paths is built once; a copy with the same
// build-id is built on its own (its bytes may differ: see internal/fileid).
func TestCacheSharesByFile(t *testing.T) {
	_, p := libcTable(t)
	if id, err := fileid.OfPath(p); err != nil || id.BuildID == "" {
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
	link := filepath.Join(t.TempDir(), "libc-link.so")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	c := NewCache()
	get := func(p string) *Table {
		t.Helper()
		tab, err := c.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	a, b, viaLink := get(p), get(cp), get(link)
	if a != viaLink || a == b || c.Len() != 2 {
		t.Fatalf("tables %p (libc), %p (a link to it), %p (a copy with its build-id), %d in all: want the link to share libc's and the copy to have its own", a, viaLink, b, c.Len())
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
	fr, err := ParseCFI(EhFrame, data, bases(ef, addr))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Build(fr)
	if err != nil {
		t.Fatal(err)
	}
	fdes := sortFDEs([]*CFI{fr})
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
