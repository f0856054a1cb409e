package unwind

import (
	"testing"
)

// FuzzParseEhFrame feeds arbitrary bytes to the .eh_frame and .debug_frame
// parsers, the row evaluator and the table builder: none may panic, and a
// built table must answer lookups.
func FuzzParseEhFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(handCIEFDE())
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{EhFrame, DebugFrame} {
			fr, err := ParseFrames(name, data, Bases{Section: 0x1000, Text: 0x2000, Data: 0x3000})
			if err != nil {
				if _, ok := err.(*FormatError); !ok {
					t.Fatalf("%s: error %T is not a *FormatError: %v", name, err, err)
				}
			}
			if fr == nil {
				t.Fatalf("%s: nil Frames", name)
			}
			tab, err := Build(fr)
			if err != nil {
				continue
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
