package output

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium returns the headless browser used to check that flamegraphs
// render, skipping when it is not installed.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping the headless Chromium screenshot")
	}
	for _, p := range []string{"/usr/bin/chromium", "chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Skip("chromium not installed (apt-get install chromium): skipping the screenshot check")
	return ""
}

// screenshot renders svg in headless Chromium at 1200x800 and decodes the PNG.
func screenshot(t *testing.T, bin string, svg []byte) image.Image {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "fg.svg"), filepath.Join(dir, "out.png")
	if err := os.WriteFile(in, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--virtual-time-budget=2000",
		"--screenshot="+out, "--window-size=1200,800", "file://"+in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	return img
}

// colors counts the distinct colors of img and whether it holds c.
func colors(img image.Image, c color.RGBA) (int, bool) {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
		}
	}
	return len(seen), seen[c]
}

// TestChromiumScreenshot renders the small flamegraph in headless Chromium
// and checks that it draws (many colors, i.e. frames and text), then that
// the embedded script works: a zoom and a search injected after load must
// paint the search highlight.
func TestChromiumScreenshot(t *testing.T) {
	bin := chromium(t)
	var buf bytes.Buffer
	if err := WriteSVG(&buf, smallProfile(), Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	highlight := color.RGBA{0xe0, 0x40, 0xe0, 0xff}
	img := screenshot(t, bin, buf.Bytes())
	if b := img.Bounds(); b.Dx() != 1200 {
		t.Errorf("screenshot is %d px wide, want 1200", b.Dx())
	}
	n, lit := colors(img, highlight)
	if n < 50 {
		t.Errorf("screenshot has %d distinct colors: blank or broken render", n)
	}
	if lit {
		t.Error("search highlight painted before any search")
	}
	inject := `<script>window.addEventListener("load", function () { setTimeout(function () {
  zoom(fg.frames.filter(function (g) { return g.name === "a"; })[0]); search("^mall"); }, 10); });</script></svg>`
	zoomed := strings.Replace(buf.String(), "</svg>", inject, 1)
	img = screenshot(t, bin, []byte(zoomed))
	if n, ok := colors(img, highlight); !ok || n < 50 {
		t.Errorf("after zoom and search: %d colors, highlight painted: %v; the embedded script failed", n, ok)
	}
}
