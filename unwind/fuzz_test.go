package unwind

import (
	"bytes"
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

// FuzzParseMaps checks that the /proc/PID/maps parser never panics and that
// what it accepts has sane ranges.
func FuzzParseMaps(f *testing.F) {
	f.Add([]byte(sampleMaps))
	f.Add([]byte("0-1 r-xp 0 0:0 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMaps(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.End < m.Start {
				t.Fatalf("accepted end before start: %+v", m)
			}
			LoadBias([]Segment{{Vaddr: 0x1000, Offset: 0x1000, Filesz: 0x1000, Flags: 5}}, m)
		}
	})
}
