package symbolize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/probee/probee/internal/gopclntab"
	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/output"
)

// A Go release build (no .symtab, no DWARF) gets the frames, lines and
// inlined calls of its unstripped build: at pcs spread over every
// function of the program, the stripped build's frames are the unstripped
// build's (same code, same addresses). Both builds' lines and inlined
// calls come from .gopclntab (objfile's TestGoTableMatchesDWARF compares
// them with the unstripped build's DWARF); the physical frames' names
// from the table here, from .symtab there. Two differences are left out:
// .symtab names an assembly function without an ABI wrapper "name.abi0"
// where the table has the runtime's "name" (internal/gopclntab/abi.go),
// and it has no symbol for the padding between functions, which the table
// gives to the function before.
func TestGoReleaseFramesMatchUnstripped(t *testing.T) {
	for _, c := range [][2]string{{"gofx-stripped", "gofx"}, {"gofx-cgo-stripped", "gofx-cgo"}} {
		t.Run(c[0], func(t *testing.T) {
			// One symbolizer each: an index takes files of one build ID
			// (gofx-cgo-stripped is strip's copy of gofx-cgo) for one.
			pcs := goPCs(t, maptest.Fixture(t, c[1]))
			got, err := New(Config{}).ObjectFrames(maptest.Fixture(t, c[0]), pcs)
			if err != nil {
				t.Fatal(err)
			}
			want, err := New(Config{}).ObjectFrames(maptest.Fixture(t, c[1]), pcs)
			if err != nil {
				t.Fatal(err)
			}
			compareSourceFrames(t, got, want)
		})
	}
}

// goPCs returns pcs every 5 bytes through every function of Go binary path.
func goPCs(t *testing.T, path string) []uint64 {
	f, err := safeelf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	funcs, err := gopclntab.Funcs(f.File)
	if err != nil {
		t.Fatal(err)
	}
	var pcs []uint64
	for _, fn := range funcs {
		for pc := fn.Entry; pc < fn.End; pc += 5 {
			pcs = append(pcs, pc)
		}
	}
	return pcs
}

// compareSourceFrames checks that the frames got match want (function,
// file, line, inline mark), grouped by address; where want has no line
// for a frame, only the function is compared.
func compareSourceFrames(t *testing.T, got, want []output.Frame) {
	t.Helper()
	g, w := byAddr(got), byAddr(want)
	var same, inlined, noLine int
	var diff []string
	for va, ws := range w {
		if ws[0].Name == "" { // padding: no symbol in .symtab
			continue
		}
		ok := len(g[va]) == len(ws)
		for i := 0; ok && i < len(ws); i++ {
			gf, wf := g[va][i], ws[i]
			ok = strings.TrimSuffix(gf.Name, ".abi0") == strings.TrimSuffix(wf.Name, ".abi0") && gf.Inline == wf.Inline
			if wf.Line == 0 {
				noLine++
			} else {
				ok = ok && gf.File == wf.File && gf.Line == wf.Line
			}
			if wf.Inline {
				inlined++
			}
		}
		if ok {
			same++
		} else if len(diff) < 8 {
			diff = append(diff, fmt.Sprintf("%#x:\n  got  %v\n  want %v", va, g[va], ws))
		}
	}
	t.Logf("%d addresses the same (%d frames without a line in DWARF); %d inline frames", same, noLine, inlined)
	if len(diff) > 0 || inlined < 100 {
		t.Errorf("frames differ (want none, and >= 100 inline frames):\n%v", diff)
	}
}

// byAddr groups frames by address, in order.
func byAddr(fs []output.Frame) map[uint64][]output.Frame {
	m := map[uint64][]output.Frame{}
	for _, f := range fs {
		m[f.Address] = append(m[f.Address], f)
	}
	return m
}
