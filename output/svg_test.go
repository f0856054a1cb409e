package output

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestWriteSVGGolden(t *testing.T) {
	tests := []struct {
		golden string
		opts   Options
	}{
		{"small.svg", Options{WithProbe: true}},
		{"small-lines-narrow.svg", Options{Lines: true, Width: 600}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSVG(&buf, smallProfile(), tt.opts); err != nil {
				t.Fatal(err)
			}
			checkSVG(t, buf.Bytes())
			golden(t, tt.golden, buf.Bytes())
		})
	}
}

// svgFrame is a frame parsed back from a rendered SVG.
type svgFrame struct {
	title    string
	x, y, w  float64
	label    string
	hasLabel bool
}

// parseSVG checks that doc is well-formed XML and returns its frames.
func parseSVG(t testing.TB, doc []byte) []svgFrame {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var frames []svgFrame
	var cur *svgFrame
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			if tok.Name.Local == "g" && attr(tok, "class") == "f" {
				frames = append(frames, svgFrame{})
				cur = &frames[len(frames)-1]
			}
			if tok.Name.Local == "rect" && cur != nil {
				cur.x, cur.y, cur.w = num(t, tok, "x"), num(t, tok, "y"), num(t, tok, "width")
			}
			if tok.Name.Local == "text" && cur != nil {
				cur.hasLabel = true
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if tok.Name.Local == "g" {
				cur = nil
			}
		case xml.CharData:
			if cur != nil && len(stack) > 0 {
				switch stack[len(stack)-1] {
				case "title":
					cur.title += string(tok)
				case "text":
					cur.label += string(tok)
				}
			}
		}
	}
	return frames
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func num(t testing.TB, e xml.StartElement, name string) float64 {
	v, err := strconv.ParseFloat(attr(e, name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", e.Name.Local, name, attr(e, name), err)
	}
	return v
}

// checkSVG checks the properties every flamegraph must have: valid XML,
// the root spanning the width, widths per level summing to at most the
// root, and each width proportional to the count in the frame's title.
func checkSVG(t testing.TB, doc []byte) []svgFrame {
	t.Helper()
	frames := parseSVG(t, doc)
	if len(frames) == 0 {
		return frames
	}
	root := frames[0]
	if !strings.HasPrefix(root.title, "all\n") {
		t.Fatalf("first frame is %q, want the root", root.title)
	}
	total := titleCount(t, root.title)
	perLevel := map[float64]float64{}
	for _, f := range frames {
		perLevel[f.y] += f.w
		want := root.w * titleCount(t, f.title) / total
		if math.Abs(f.w-want) > 0.011 {
			t.Errorf("frame %q: width %.2f, want %.2f (proportional to its count)", f.title, f.w, want)
		}
		if f.x < root.x-0.01 || f.x+f.w > root.x+root.w+0.02 {
			t.Errorf("frame %q [%.2f,+%.2f] outside the root", f.title, f.x, f.w)
		}
		if f.hasLabel && float64(len([]rune(f.label)))*charWidth > f.w {
			t.Errorf("frame %q: label %q wider than the frame (%.2f px)", f.title, f.label, f.w)
		}
	}
	for y, w := range perLevel {
		if w > root.w+0.05 {
			t.Errorf("level y=%v: widths sum to %.2f > root %.2f", y, w, root.w)
		}
	}
	return frames
}

// titleCount reads the count from a title "name\n1,234 hits (5.00%)".
func titleCount(t testing.TB, title string) float64 {
	_, rest, ok := strings.Cut(title, "\n")
	if !ok {
		t.Fatalf("title %q has no count line", title)
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(strings.Fields(rest)[0], ",", ""), 64)
	if err != nil {
		t.Fatalf("title %q: %v", title, err)
	}
	return n
}

func TestSVGProperties(t *testing.T) {
	for _, n := range []int{1, 7, 300, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			p := syntheticProfile(n, 12)
			var buf bytes.Buffer
			if err := WriteSVG(&buf, p, Options{WithProbe: true}); err != nil {
				t.Fatal(err)
			}
			frames := checkSVG(t, buf.Bytes())
			if total := titleCount(t, frames[0].title); uint64(total) != p.total(nil) {
				t.Errorf("root count %v, want %d", total, p.total(nil))
			}
			minW := frames[0].w * minFraction
			for _, f := range frames {
				if f.w < minW-0.01 {
					t.Errorf("frame %q is %.3f px wide, below the %.3f px cut-off", f.title, f.w, minW)
				}
			}
		})
	}
}

func TestSVGTitles(t *testing.T) {
	p := smallProfile()
	tests := []struct {
		name string
		doc  svgDoc
		want string
	}{
		{"combined", combinedDoc(p, Options{}), "3 probes — 120 hits"},
		{"one probe", probeDoc(p, probeMalloc, Options{}), "probe uprobe:libc:malloc — 113 hits"},
		{"zero hits", probeDoc(p, probeNever, Options{}), "probe uprobe:./fx:never_called — 0 hits"},
		{"samples", combinedDoc(&Profile{Measure: Measure{Kind: KindSamples, PeriodNanos: 10101010}, Probes: []string{"cpu"},
			Samples: []Sample{{Probe: "cpu", Count: 12345}}}, Options{}), "cpu — 12,345 samples (≈ 125 s CPU)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.doc.title != tt.want {
				t.Errorf("title %q, want %q", tt.doc.title, tt.want)
			}
		})
	}
}

func TestSVGNoSamples(t *testing.T) {
	var buf bytes.Buffer
	if err := renderSVG(&buf, probeDoc(smallProfile(), probeNever, Options{})); err != nil {
		t.Fatal(err)
	}
	if frames := checkSVG(t, buf.Bytes()); len(frames) != 0 {
		t.Errorf("empty flamegraph has %d frames", len(frames))
	}
	if !bytes.Contains(buf.Bytes(), []byte(">no samples<")) {
		t.Error(`empty flamegraph does not say "no samples"`)
	}
}

func TestFitText(t *testing.T) {
	tests := []struct {
		s     string
		width float64
		want  string
	}{
		{"malloc", 100, "malloc"},
		{"malloc", 6 + 6*charWidth, "malloc"},
		{"malloc", 6 + 5*charWidth, "mall…"},
		{"malloc", 6 + 3*charWidth, "ma…"},
		{"malloc", 6 + 2.9*charWidth, ""},
		{"ünïcödé", 6 + 4*charWidth, "ünï…"},
	}
	for _, tt := range tests {
		if got := fitText(tt.s, tt.width, charWidth); got != tt.want {
			t.Errorf("fitText(%q, %.1f) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}
