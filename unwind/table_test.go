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

func TestMarshalRoundTrip(t *testing.T) {
	tab, _ := libcTable(t)
	data, err := tab.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != tab.Size() {
		t.Fatalf("encoded %d bytes, Size says %d", len(data), tab.Size())
	}
	var back Table
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for i := range tab.Entries {
		pc := tab.EntryPC(i)
		for _, q := range []uint64{pc, pc + 1, pc - 1} {
			r1, ok1 := tab.Lookup(q)
			r2, ok2 := back.Lookup(q)
			if r1 != r2 || ok1 != ok2 {
				t.Fatalf("Lookup(%#x) differs after round trip: %v %v vs %v %v", q, r1, ok1, r2, ok2)
			}
		}
		if i > 0 && tab.EntryPC(i-1) >= pc {
			t.Fatalf("entries not strictly sorted at %d", i)
		}
	}
	if err := back.UnmarshalBinary(data[:len(data)-1]); err == nil {
		t.Error("truncated table accepted")
	}
}

func TestRuleSetShared(t *testing.T) {
	tab, _ := libcTable(t)
	rs := NewRuleSet()
	remap, err := rs.Add(tab)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := rs.Add(tab); len(rs.Rules) != len(tab.Rules) || again[5] != remap[5] {
		t.Fatalf("adding the same table twice grew the set to %d rules", len(rs.Rules))
	}
	enc, err := tab.AppendEntries(nil, remap)
	if err != nil || len(enc) != len(tab.Entries)*EntrySize {
		t.Fatalf("AppendEntries: %d bytes, %v", len(enc), err)
	}
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
	data, addr, err := frameSection(ef, EhFrame)
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
	for i, f := range fdes {
		if i+1 < len(fdes) {
			next := fdes[i+1].Start
			if next == f.End || (next < f.End+PadGap && next%PadGap == 0) {
				continue // next function or alignment padding
			}
		}
		checked++
		if r, ok := tab.Lookup(f.End); ok {
			t.Errorf("pc %#x just past FDE %#x..%#x has rule %v, want none", f.End, f.Start, f.End, r)
		}
	}
	t.Logf("%d of %d function ends have an end marker", checked, len(fdes))
}
