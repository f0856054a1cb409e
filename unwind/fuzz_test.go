package unwind

import (
	"reflect"
	"testing"
)

// FuzzParseEhFrame feeds arbitrary bytes to the .eh_frame and .debug_frame
// parsers, the row evaluator and the table builder: none may panic, a
// section parsed in parts must give what one pass gives (or be refused),
// a built table must answer lookups, and Build, in one part or in three,
// must give refBuild's table (or its error).
func FuzzParseEhFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(handCIEFDE())
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{EhFrame, DebugFrame} {
			b := Bases{Section: 0x1000, Text: 0x2000, Data: 0x3000}
			fr, err := ParseCFI(name, data, b)
			if err != nil {
				if _, ok := err.(*FormatError); !ok {
					t.Fatalf("%s: error %T is not a *FormatError: %v", name, err, err)
				}
			}
			if fr == nil {
				t.Fatalf("%s: nil CFI", name)
			}
			if parts, ok := newFrameParser(name, data, b).parseParts(3); ok && (err != nil || !reflect.DeepEqual(parts, fr)) {
				t.Fatalf("%s: in parts, %d FDEs and %d CIEs; in one pass %d and %d (error %v)", name, len(parts.FDEs), len(parts.CIEs), len(fr.FDEs), len(fr.CIEs), err)
			}
			tab, err := Build(fr)
			want, wantErr := refBuild([]*CFI{fr})
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%s: Build error %v, refBuild error %v", name, err, wantErr)
			}
			if err != nil {
				continue
			}
			if d := sameTable(tab, want); d != "" {
				t.Fatalf("%s: Build differs from refBuild: %s", name, d)
			}
			if parts, err := build(sortFDEs([]*CFI{fr}), 3); err != nil {
				t.Fatalf("%s: in 3 parts: %v", name, err)
			} else if d := sameTable(parts, want); d != "" {
				t.Fatalf("%s: in 3 parts, differs from refBuild: %s", name, d)
			}
			for _, e := range fr.FDEs {
				tab.Lookup(e.Start)
				tab.Lookup(e.End)
			}
			for i := range tab.Entries {
				tab.EntryPC(i)
			}
			if _, err := tab.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
