package unwind

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

// framesOf parses the CFI sections of the ELF file at path as BuildELF does.
func framesOf(t testing.TB, path string) []*CFI {
	t.Helper()
	f, err := safeelf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var frames []*CFI
	for _, name := range []string{EhFrame, DebugFrame} {
		data, addr, err := frameSection(f.File, name, readSection)
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			continue
		}
		fr, err := ParseCFI(name, data, bases(f.File, addr))
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, fr)
	}
	if fr := entryFrames(f.File, frames); fr != nil {
		frames = append(frames, fr)
	}
	return frames
}

// Build gives the table refBuild gives, in one part or several: entries,
// rules in the same order, and stats.
func TestBuildInParts(t *testing.T) {
	paths := []string{systemLib("libc.so.6"), systemLib("libstdc++.so.6"), filepath.Join(fixtureDir, "cxx"), filepath.Join(fixtureDir, "rustfx")}
	if !testing.Short() {
		paths = append(paths, bigBinaries()...)
	}
	for _, p := range paths {
		if p == "" || !exists(p) {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			frames := framesOf(t, p)
			fdes := sortFDEs(frames)
			want, err := refBuild(frames)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 2, 3, 7} {
				got, err := build(fdes, n)
				if err != nil {
					t.Fatal(err)
				}
				if d := sameTable(got, want); d != "" {
					t.Errorf("%d parts: table differs from refBuild's: %s", n, d)
				}
			}
		})
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// refBuild is the table builder as first written, the oracle of Build: one
// pass, absolute pcs, a map for the rules, the page index laid out at the
// end. It shares only the row evaluation (interp) with Build.
func refBuild(frames []*CFI) (*Table, error) {
	var pcs []uint64
	var idx []uint16
	t := &Table{Rules: []Rule{{}}}
	index := map[Rule]uint16{{}: 0}
	add := func(pc uint64, r Rule) error {
		i, ok := index[r]
		if !ok {
			if len(t.Rules) > math.MaxUint16 {
				return fmt.Errorf("more than %d distinct unwind rules", math.MaxUint16+1)
			}
			i = uint16(len(t.Rules))
			t.Rules, index[r] = append(t.Rules, r), i
		}
		if n := len(pcs); n > 0 && pcs[n-1] == pc {
			pcs, idx = pcs[:n-1], idx[:n-1]
		}
		if n := len(pcs); n > 0 && idx[n-1] == i {
			return nil
		}
		pcs, idx = append(pcs, pc), append(idx, i)
		return nil
	}
	fdes := sortFDEs(frames)
	for i := range fdes.len() {
		fr, f := fdes.at(i)
		s := &t.Stats
		s.FDEs++
		rows, err := fr.Rows(f, nil)
		if err != nil {
			s.BadFDEs++
			if s.FirstError == "" {
				s.FirstError = fmt.Sprintf("FDE at %#x (pc %#x..%#x): %v", f.Offset, f.Start, f.End, err)
			}
			rows = []Row{{PC: f.Start, Rule: ruleUnsupported}}
		}
		for n := len(pcs); n > 0 && pcs[n-1] > f.Start; n-- {
			pcs, idx = pcs[:n-1], idx[:n-1]
			s.Overlaps++
		}
		for _, r := range rows {
			refCount(s, r.Rule.CFA)
			if err := add(r.PC, r.Rule); err != nil {
				return nil, err
			}
		}
		next := uint64(math.MaxUint64)
		if i+1 < fdes.len() {
			next = fdes.start(i + 1)
		}
		if !(next >= f.End && next-f.End < PadGap && next%PadGap == 0) {
			if err := add(f.End, Rule{}); err != nil {
				return nil, err
			}
		}
	}
	return refLayout(t, pcs, idx)
}

// refLayout lays out refBuild's entries (absolute pcs, rule indexes).
func refLayout(t *Table, pcs []uint64, idx []uint16) (*Table, error) {
	if len(pcs) == 0 {
		t.Pages = []uint32{0}
		return t, nil
	}
	t.Base = pcs[0]
	span := pcs[len(pcs)-1] - t.Base
	if span > math.MaxUint32 {
		return nil, fmt.Errorf("unwind info spans %#x bytes, more than the 4 GiB a table can address", span)
	}
	npages := int(span>>PageShift) + 1
	t.Pages = make([]uint32, npages+1)
	t.Entries = make([]Entry, len(pcs))
	page := 0
	for i, pc := range pcs {
		rel := pc - t.Base
		for ; page <= int(rel>>PageShift); page++ {
			t.Pages[page] = uint32(i)
		}
		t.Entries[i] = Entry{PCLow: uint16(rel), Rule: idx[i]}
	}
	for ; page <= npages; page++ {
		t.Pages[page] = uint32(len(pcs))
	}
	return t, nil
}

func refCount(s *Stats, cfa CFAType) {
	s.Rows++
	switch cfa {
	case CFAPLT:
		s.PLTRows++
	case CFASignal:
		s.SignalRows++
	case CFAEndOfStack:
		s.EndRows++
	case CFAUnsupported:
		s.Unsupported++
	}
}

// sameTable reports how got differs from want ("" when it does not).
func sameTable(got, want *Table) string {
	got, want = ptr(*got), ptr(*want)
	got.Entries, want.Entries = slices.Clip(got.Entries), slices.Clip(want.Entries)
	if reflect.DeepEqual(got, want) {
		return ""
	}
	return fmt.Sprintf("base %#x/%#x, %d/%d pages, %d/%d entries, %d/%d rules, stats %+v / %+v",
		got.Base, want.Base, len(got.Pages), len(want.Pages), len(got.Entries), len(want.Entries), len(got.Rules), len(want.Rules), got.Stats, want.Stats)
}

func ptr[T any](v T) *T { return &v }

// randomFrames is a section of n FDEs at random places: adjacent, padded,
// overlapping, sharing a start, some far beyond 4 GiB, some ending there
// (cut short by the next); each has a few random rows.
func randomFrames(rng *rand.Rand, n int) *CFI {
	cie := &CIE{Version: 1, CodeAlign: 1, DataAlign: -8, RAReg: 16, AddrSize: 8,
		Initial: []byte{0x0c, 7, 8, 0x90, 1}} // def_cfa rsp+8; rip at cfa-8
	fr := &CFI{Section: EhFrame, CIEs: []*CIE{cie}}
	pc := uint64(0x1000)
	for range n {
		switch rng.IntN(8) {
		case 0: // overlap the previous FDE
			pc -= uint64(rng.IntN(64))
		case 1: // far away, sometimes
			if rng.IntN(4) == 0 {
				pc += 1 << 32
			}
		case 2: // next page
			pc += 1 << PageShift
		default:
			pc += uint64(rng.IntN(3)) * PadGap / 2
		}
		size := uint64(1 + rng.IntN(200))
		if rng.IntN(10) == 0 {
			size = 1 << 33
		}
		var ins []byte
		for range rng.IntN(4) {
			ins = append(ins, 0x40|byte(1+rng.IntN(20)), 0x0e, byte(8*(1+rng.IntN(3))))
			if size == 1<<33 && rng.IntN(2) == 0 { // rows far into a huge FDE
				ins = append(ins, 0x04, 0, 0, 0, 0x70, 0x0e, byte(8*(1+rng.IntN(3))))
			}
		}
		fr.FDEs = append(fr.FDEs, FDE{Start: pc, End: pc + size, instr: uint32(len(fr.data)), ninstr: uint32(len(ins))})
		fr.data = append(fr.data, ins...)
		pc += min(size, 300)
	}
	return fr
}

// Parts meet where FDEs overlap, merge or lie beyond 4 GiB: Build in
// several parts still gives refBuild's table or error.
func TestBuildRandomParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var built, refused int
	for i := range 500 {
		fr := randomFrames(rng, 1+rng.IntN(40))
		frames := []*CFI{fr}
		want, wantErr := refBuild(frames)
		for _, n := range []int{1, 2, 5} {
			got, err := build(sortFDEs(frames), n)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("case %d, %d parts: error %v, refBuild's %v", i, n, err, wantErr)
			}
			if err != nil {
				refused++
			} else {
				built++
				if d := sameTable(got, want); d != "" {
					t.Fatalf("case %d, %d parts: %s", i, n, d)
				}
			}
		}
	}
	t.Logf("%d tables built, %d refused", built, refused)
}
