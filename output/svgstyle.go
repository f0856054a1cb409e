package output

import (
	"fmt"
	"hash/fnv"
	"math"
)

// frameColor picks a stable fill for a frame from a hash of its name, so a
// function keeps its color across runs and files. Each kind has its own hue
// band: user code warm (red to orange), inlined calls yellow, kernel code
// blue, probe and comm frames grey-violet; the root is grey.
func frameColor(n *flameNode) string {
	h := fnv.New32a()
	h.Write([]byte(n.name))
	v := h.Sum32()
	a := float64(v&0xffff) / 0xffff // hue position in the band
	b := float64(v>>16) / 0xffff    // lightness jitter
	switch n.kind {
	case kindKernel:
		return hsl(195+35*a, 0.65, 0.62+0.1*b)
	case kindInline:
		return hsl(45+15*a, 0.85, 0.58+0.1*b)
	case kindMeta:
		if n.name == "all" {
			return "#c8c8c8"
		}
		return hsl(260+30*a, 0.25, 0.72+0.08*b)
	}
	return hsl(5+35*a, 0.82, 0.58+0.1*b)
}

// hsl converts hue (degrees), saturation and lightness (0..1) to #rrggbb.
func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	hp := math.Mod(h, 360) / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r, g, b float64
	switch int(hp) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

// svgStyle is the document's CSS.
const svgStyle = `
text { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; fill: #000; }
.bg { fill: #f8f8f4; }
.title { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 17px; text-anchor: middle; }
.sub { text-anchor: middle; fill: #555; }
.empty { font-size: 17px; text-anchor: middle; fill: #888; }
.ctl { cursor: pointer; fill: #1a4fa0; text-decoration: underline; }
#details, #matched { fill: #333; }
g.f { cursor: pointer; }
g.f rect { rx: 2px; ry: 2px; }
g.f text { pointer-events: none; }
g.f:hover rect { stroke: #000; stroke-width: 0.7; }
g.f.anc rect { opacity: 0.55; }
`

// svgScript is the flamegraph's behaviour, written for probee: hover
// details, click-to-zoom (the clicked frame fills the width, its ancestors
// span it faded, everything else hides), and a regular-expression search
// (click "Search" or press Ctrl-F; Escape clears) that highlights matches and
// shows the share of the total they cover, counting nested matches once.
const svgScript = `
"use strict";
var fg = {};
function probeeInit(evt) {
  var svg = document.documentElement;
  fg.pad = +svg.getAttribute("data-pad");
  fg.cw = +svg.getAttribute("data-cw");
  fg.span = +svg.getAttribute("width") - 2 * fg.pad;
  fg.details = document.getElementById("details");
  fg.matched = document.getElementById("matched");
  fg.unzoom = document.getElementById("unzoom");
  fg.frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  fg.frames.forEach(function (g) {
    var r = g.querySelector("rect"), t = g.querySelector("title");
    g.fx = +r.getAttribute("x"); g.fw = +r.getAttribute("width");
    g.fy = +r.getAttribute("y"); g.fill = r.getAttribute("fill");
    g.info = t.textContent; g.name = g.info.split("\n")[0];
    g.addEventListener("click", function () { zoom(g); });
    g.addEventListener("mouseover", function () { fg.details.textContent = g.info.replace("\n", " \u2014 "); });
    g.addEventListener("mouseout", function () { fg.details.textContent = " "; });
  });
  fg.unzoom.addEventListener("click", unzoom);
  document.getElementById("search").addEventListener("click", askSearch);
  window.addEventListener("keydown", function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); askSearch(); }
    if (e.key === "Escape") { unzoom(); search(""); }
  });
}
function place(g, x, w) {
  var r = g.querySelector("rect"), t = g.querySelector("text");
  g.style.display = "";
  r.setAttribute("x", x.toFixed(2)); r.setAttribute("width", w.toFixed(2));
  if (!t) {
    t = document.createElementNS("http://www.w3.org/2000/svg", "text");
    t.setAttribute("y", g.fy + 12); g.appendChild(t);
  }
  t.setAttribute("x", (x + 3).toFixed(2));
  t.textContent = fit(g.name, w);
}
function fit(s, w) {
  var n = Math.floor((w - 6) / fg.cw + 1e-9), c = Array.from(s);
  if (n < 3) return "";
  return c.length <= n ? s : c.slice(0, n - 1).join("") + "\u2026";
}
function zoom(z) {
  var eps = 0.02, k = fg.span / z.fw;
  fg.frames.forEach(function (g) {
    g.classList.remove("anc");
    if (g.fy > z.fy) {
      if (g.fx <= z.fx + eps && g.fx + g.fw >= z.fx + z.fw - eps) { g.classList.add("anc"); place(g, fg.pad, fg.span); }
      else g.style.display = "none";
    } else if (g.fx >= z.fx - eps && g.fx + g.fw <= z.fx + z.fw + eps) {
      place(g, fg.pad + (g.fx - z.fx) * k, g.fw * k);
    } else g.style.display = "none";
  });
  fg.unzoom.setAttribute("visibility", "visible");
}
function unzoom() {
  fg.frames.forEach(function (g) { g.classList.remove("anc"); place(g, g.fx, g.fw); });
  fg.unzoom.setAttribute("visibility", "hidden");
}
function askSearch() {
  var t = window.prompt("Search frames (regular expression; empty clears)", fg.term || "");
  if (t !== null) search(t);
}
function search(term) {
  var re = null, spans = [];
  fg.term = term;
  if (term) { try { re = new RegExp(term); } catch (e) { window.alert("bad regular expression: " + e.message); return; } }
  fg.frames.forEach(function (g) {
    var hit = re !== null && re.test(g.name);
    g.querySelector("rect").setAttribute("fill", hit ? "#e040e0" : g.fill);
    if (hit) spans.push([g.fx, g.fx + g.fw]);
  });
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var covered = 0, end = -Infinity;
  spans.forEach(function (s) {
    if (s[1] <= end) return;
    covered += s[1] - Math.max(s[0], end); end = s[1];
  });
  fg.matched.textContent = re === null ? " " : "Matched: " + (100 * covered / fg.span).toFixed(1) + "%";
}
`
