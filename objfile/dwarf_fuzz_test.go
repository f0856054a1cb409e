package objfile

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

// dwarfSections are the sections the fuzz target builds DWARF from.
var dwarfSections = []string{".debug_info", ".debug_abbrev", ".debug_line", ".debug_str",
	".debug_line_str", ".debug_rnglists", ".debug_ranges", ".debug_addr", ".debug_str_offsets"}

// fixtureSections reads dwarfSections of a fixture (nil for missing ones).
func fixtureSections(name string) [][]byte {
	f, err := elf.Open(filepath.Join("..", "tests", "fixtures", "bin", name))
	if err != nil {
		return nil
	}
	defer f.Close()
	out := make([][]byte, len(dwarfSections))
	for i, n := range dwarfSections {
		if s := f.Section(n); s != nil {
			out[i], _ = s.Data()
		}
	}
	return out
}

// newFuzzDWARF builds DWARF from raw sections as debug/elf would.
func newFuzzDWARF(s [][]byte) (*dwarf.Data, error) {
	d, err := dwarf.New(s[1], nil, nil, s[0], s[2], nil, s[6], s[3])
	if err != nil {
		return nil, err
	}
	for i, n := range dwarfSections {
		if i == 4 || i == 5 || i >= 7 {
			if err := d.AddSection(n, s[i]); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// FuzzDWARFLookup feeds arbitrary DWARF (info, abbrev, line tables and the
// sections they reference) to the address lookup: line rows, inline tree,
// names. It must return frames or nothing, never panic or loop. debug/dwarf
// itself runs unguarded here, so a panic in it is found too (production
// code calls lookup, which recovers).
func FuzzDWARFLookup(f *testing.F) {
	for _, name := range []string{"inline", "cxx"} {
		s := fixtureSections(name)
		if s == nil {
			continue
		}
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], uint64(0x11c0))
		f.Add(s[0][:len(s[0])/2], s[1], s[2][:len(s[2])/2], s[3], s[4], s[5], uint64(0x11e3))
	}
	f.Fuzz(func(t *testing.T, info, abbrev, line, str, lineStr, rng []byte, pc uint64) {
		s := [][]byte{info, abbrev, line, str, lineStr, rng, nil, nil, nil}
		var d *dwarf.Data
		err := safeelf.Guard("fuzz", func() (e error) { d, e = newFuzzDWARF(s); return e })
		if err != nil || d == nil {
			return
		}
		di := newDWARFInfo(d)
		for _, a := range []uint64{pc, pc + 1, 0x11c0, 0x1200} {
			for _, fr := range di.lookupLocked(a) {
				if fr.Line < 0 {
					t.Fatalf("negative line %d", fr.Line)
				}
			}
		}
	})
}
