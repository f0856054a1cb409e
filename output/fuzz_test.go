package output

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzWriters feeds arbitrary names, labels and comms through every writer:
// the SVG must stay well-formed XML, each collapsed line must hold exactly
// the expected frames, and pprof must round-trip.
func FuzzWriters(f *testing.F) {
	f.Add("malloc", "uprobe:libc:malloc", "fx", "a.c")
	f.Add("a;b\nc]]></script>", "p<&>\"'", "\x00\xff", "\t")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, name, label, comm, file string) {
		p := &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{label, "other"}, Samples: []Sample{
			{Probe: label, Comm: comm, PID: 1, Count: 3, User: StackOf(&Frame{Name: name, File: file, Line: 1}, &Frame{Name: "leaf"}),
				Kernel: StackOf(&Frame{Name: name})},
		}}
		var svg, folded bytes.Buffer
		if err := WriteSVG(&svg, p, Options{WithProbe: true, Lines: true}); err != nil {
			t.Fatal(err)
		}
		checkSVG(t, svg.Bytes())
		if err := WriteCollapsed(&folded, p, Options{WithProbe: true, Lines: true}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(folded.String(), "\n"), "\n")
		if len(lines) != 1 || strings.Count(lines[0], ";") != 4 || !strings.HasSuffix(lines[0], " 3") {
			t.Fatalf("collapsed output %q: want one line of 5 frames with count 3", folded.String())
		}
		writePprof(t, p)
		for _, n := range FileNames([]string{label, label}) {
			if n == "" || strings.ContainsAny(n, "/\x00") || strings.HasPrefix(n, ".") {
				t.Fatalf("unsafe file name %q for %q", n, label)
			}
		}
	})
}
