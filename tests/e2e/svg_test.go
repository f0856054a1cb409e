package e2e

import (
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The flamegraph of a real run is well-formed, names the probe and its
// frames, and renders in headless Chromium (Debian's chromium, installed by
// tests/install-deps.sh) into a picture with many colours.
func TestFlamegraphRenders(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-fp")
	dir := t.TempDir()
	svg := filepath.Join(dir, "chain.svg")
	if r := run(t, dir, "--uprobe", bin+":leaf", "-o", svg, "--", bin, "100"); r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	for _, want := range []string{"leaf", ">main<", "100 hits"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		testgate.Feature(t, "chromium", testgate.Required(), err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "p"),
		"--screenshot="+shot, "--window-size=1200,800", "file://"+svg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if n := distinctColors(t, shot); n < 20 {
		t.Errorf("screenshot has %d distinct colours: blank render?", n)
	}
}

func distinctColors(t *testing.T, path string) int {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}
