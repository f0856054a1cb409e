package output

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Flamegraph geometry. Text is monospace so its width is predictable both
// here and in the embedded script, which re-truncates names on zoom.
const (
	defaultWidth = 1200
	frameHeight  = 16
	fontSize     = 12
	charWidth    = 0.6 * fontSize // advance of one monospace character
	padX         = 10             // left and right margin
	headerHeight = 64             // title, subtitle and controls
	footerHeight = 30             // details line
	minFraction  = 0.001          // frames narrower than this share are left out
)

// svgDoc is what one flamegraph shows.
type svgDoc struct {
	title    string
	subtitle string
	unit     string
	width    int
	tree     *stackTree
}

// WriteSVG writes p as one flamegraph. With opts.WithProbe the probes are
// the first level above the root; otherwise all stacks merge under "all".
func WriteSVG(w io.Writer, p *Profile, opts Options) error {
	return renderSVG(w, combinedDoc(p, opts))
}

func combinedDoc(p *Profile, opts Options) svgDoc {
	labels := ProbeLabels(p)
	d := svgDoc{unit: p.unit(), width: opts.Width, tree: collapseTree(p, opts, nil)}
	total := p.total(nil)
	if len(labels) == 1 {
		m := p.MeasureOf(labels[0])
		d.title = m.heading(labels[0]) + " — " + m.amount(total)
	} else {
		d.title = fmt.Sprintf("%d probes — %s", len(labels), p.common().amount(total))
		parts := make([]string, len(labels))
		for i, l := range labels {
			parts[i] = l + " " + thousands(p.total(forProbe(l)))
		}
		d.subtitle = strings.Join(parts, " · ")
	}
	d.subtitle = joinNonEmpty(d.subtitle, p.dropSummary())
	return d
}

func probeDoc(p *Profile, label string, opts Options) svgDoc {
	keep := forProbe(label)
	m := p.MeasureOf(label)
	return svgDoc{
		title:    m.heading(label) + " — " + m.amount(p.total(keep)),
		subtitle: p.dropSummary(),
		unit:     m.unit(),
		width:    opts.Width,
		tree:     collapseTree(p, opts, keep),
	}
}

func (p *Profile) dropSummary() string {
	if len(p.Drops) == 0 {
		return ""
	}
	causes := make([]string, 0, len(p.Drops))
	for c := range p.Drops {
		causes = append(causes, c)
	}
	sortStrings(causes)
	for i, c := range causes {
		causes[i] = c + " " + thousands(p.Drops[c])
	}
	return "drops: " + strings.Join(causes, ", ")
}

func joinNonEmpty(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " · " + b
}

// renderSVG lays out and writes one flamegraph document.
func renderSVG(w io.Writer, d svgDoc) error {
	if d.width <= 0 {
		d.width = defaultWidth
	}
	root := d.tree.flame(minFraction)
	minCount := uint64(float64(root.count) * minFraction)
	boxes, depth := layout(root, max(minCount, 1))
	height := headerHeight + depth*frameHeight + footerHeight
	if root.count == 0 {
		height = headerHeight + 3*frameHeight + footerHeight
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	r := &svgWriter{w: bw, d: d, total: root.count, depth: depth}
	r.header(height)
	if root.count == 0 {
		r.printf(`<text class="empty" x="%d" y="%d">no samples</text>`+"\n", d.width/2, headerHeight+2*frameHeight)
	}
	r.w.WriteString("<g id=\"frames\">\n")
	for _, b := range boxes {
		r.frame(b)
	}
	r.w.WriteString("</g>\n</svg>\n")
	return bw.Flush()
}

type svgWriter struct {
	w     *bufio.Writer
	d     svgDoc
	total uint64
	depth int
	num   []byte
}

func (r *svgWriter) printf(format string, args ...any) { fmt.Fprintf(r.w, format, args...) }

func (r *svgWriter) header(height int) {
	wd := r.d.width
	r.printf(`<?xml version="1.0" encoding="UTF-8" standalone="no"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" `+
		`data-pad="%d" data-cw="%g" data-unit="%s" onload="probeeInit(evt)">`+"\n",
		wd, height, wd, height, padX, charWidth, escapeXML(r.d.unit))
	r.w.WriteString("<style>" + svgStyle + "</style>\n<script type=\"text/ecmascript\"><![CDATA[" + svgScript + "]]></script>\n")
	r.printf(`<rect class="bg" x="0" y="0" width="%d" height="%d"/>`+"\n", wd, height)
	r.printf(`<text class="title" x="%d" y="24">%s</text>`+"\n", wd/2, escapeXML(fitText(Sanitize(r.d.title), float64(wd-2*padX), 17*0.6)))
	if r.d.subtitle != "" {
		r.printf(`<text class="sub" x="%d" y="42">%s</text>`+"\n", wd/2, escapeXML(fitText(Sanitize(r.d.subtitle), float64(wd-2*padX), charWidth)))
	}
	r.printf(`<text id="unzoom" class="ctl" x="%d" y="58" visibility="hidden">Reset zoom</text>`+"\n", padX)
	r.printf(`<text id="search" class="ctl" x="%d" y="58" text-anchor="end">Search</text>`+"\n", wd-padX)
	fy := headerHeight + r.depth*frameHeight + 20
	r.printf(`<text id="details" x="%d" y="%d"> </text>`+"\n", padX, fy)
	r.printf(`<text id="matched" x="%d" y="%d" text-anchor="end"> </text>`+"\n", wd-padX, fy)
}

// frame writes one box: a group with a hover title, a rect and a label.
func (r *svgWriter) frame(b box) {
	span := float64(r.d.width - 2*padX)
	x := padX + span*float64(b.start)/float64(r.total)
	w := span * float64(b.n.count) / float64(r.total)
	y := headerHeight + (r.depth-1-b.depth)*frameHeight
	pct := 100 * float64(b.n.count) / float64(r.total)
	bw := r.w
	bw.WriteString(`<g class="f"><title>`)
	bw.WriteString(escapeXML(b.n.name))
	bw.WriteString("\n")
	r.num = strconv.AppendUint(r.num[:0], b.n.count, 10)
	bw.WriteString(thousandsBytes(r.num) + " " + r.d.unit + " (" + strconv.FormatFloat(pct, 'f', 2, 64) + "%)")
	fmt.Fprintf(bw, `</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"/>`,
		x, y, w, frameHeight-1, frameColor(b.n))
	if label := fitText(b.n.name, w, charWidth); label != "" {
		fmt.Fprintf(bw, `<text x="%.2f" y="%d">%s</text>`, x+3, y+12, escapeXML(label))
	}
	bw.WriteString("</g>\n")
}

// fitText truncates s with an ellipsis to fit width pixels at advance cw per
// character, or returns "" when not even two characters and the ellipsis fit.
// The embedded script applies the same rule on zoom.
func fitText(s string, width, cw float64) string {
	maxc := int((width-6)/cw + 1e-9)
	if maxc < 3 {
		return ""
	}
	rs := []rune(s)
	if len(rs) <= maxc {
		return s
	}
	return string(rs[:maxc-1]) + "…"
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func escapeXML(s string) string { return xmlEscaper.Replace(s) }

// thousands formats n with comma separators: 12345 -> "12,345".
func thousands(n uint64) string { return thousandsBytes(strconv.AppendUint(nil, n, 10)) }

func thousandsBytes(d []byte) string {
	var b strings.Builder
	for i, c := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(c)
	}
	return b.String()
}
