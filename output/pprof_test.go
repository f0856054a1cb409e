package output

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

func writePprof(t *testing.T, p *Profile) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePprof(&buf, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte{0x1f, 0x8b}) {
		t.Fatal("pprof output is not gzipped")
	}
	prof, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("profile.Parse: %v", err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatalf("parsed profile invalid: %v", err)
	}
	return prof
}

// foldPprof turns a parsed profile back into collapsed lines with the probe
// root, using the same naming rules, to compare with WriteCollapsed.
func foldPprof(prof *profile.Profile) string {
	counts := map[string]int64{}
	for _, s := range prof.Sample {
		comm := Sample{Comm: first(s.Label["comm"])}
		if pid := s.NumLabel["pid"]; len(pid) > 0 {
			comm.PID = int(pid[0])
		}
		frames := []string{Sanitize(first(s.Label["probe"])), commName(&comm)}
		for _, loc := range slices.Backward(s.Location) {
			kernel := loc.Mapping != nil && loc.Mapping.File == kernelMapping
			for i, ln := range slices.Backward(loc.Line) {
				frames = append(frames, FrameName(Frame{Name: ln.Function.Name, Inline: i < len(loc.Line)-1}, kernel, false))
			}
		}
		counts[strings.Join(frames, ";")] += s.Value[0]
	}
	var lines []string
	for k, v := range counts {
		lines = append(lines, fmt.Sprintf("%s %d\n", k, v))
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func TestPprofRoundTrip(t *testing.T) {
	for name, p := range map[string]*Profile{"small": smallProfile(), "synthetic": syntheticProfile(500, 10)} {
		t.Run(name, func(t *testing.T) {
			prof := writePprof(t, p)
			var folded bytes.Buffer
			if err := WriteCollapsed(&folded, p, Options{WithProbe: true}); err != nil {
				t.Fatal(err)
			}
			if got := foldPprof(prof); got != folded.String() {
				t.Errorf("pprof stacks differ from collapsed:\n--- pprof\n%s\n--- collapsed\n%s", got, folded.String())
			}
			var total int64
			for _, s := range prof.Sample {
				total += s.Value[0]
			}
			if uint64(total) != p.total(nil) {
				t.Errorf("pprof total %d, want %d", total, p.total(nil))
			}
		})
	}
}

func TestPprofContents(t *testing.T) {
	prof := writePprof(t, smallProfile())
	if st := prof.SampleType; len(st) != 1 || st[0].Type != "hits" || st[0].Unit != "count" {
		t.Errorf("sample types %v, want hits/count", st)
	}
	wantComment := "probe " + probeNever + ": 0 hits"
	if !slices.Contains(prof.Comments, wantComment) {
		t.Errorf("comments %q lack %q", prof.Comments, wantComment)
	}
	var libc, inline, lined bool
	for _, m := range prof.Mapping {
		if strings.HasSuffix(m.File, "libc.so.6") && m.BuildID == "c0ffee" {
			libc = true
			if want := uint64(0x29d90); m.Offset != want {
				t.Errorf("libc mapping offset %#x, want %#x (module offset of its start)", m.Offset, want)
			}
		}
	}
	for _, l := range prof.Location {
		if len(l.Line) == 2 && l.Line[0].Function.Name == "inner" && l.Line[1].Function.Name == "outer" {
			inline = l.Line[0].Line == 5 && l.Line[1].Line == 20 && l.Line[0].Function.Filename == "inl.h"
		}
		for _, ln := range l.Line {
			lined = lined || (ln.Function.Name == "b" && ln.Function.Filename == "fx.c" && ln.Line == 10)
		}
	}
	if !libc || !inline || !lined {
		t.Errorf("libc mapping with build-id: %v; inline lines inner:5 in outer:20: %v; b at fx.c:10: %v",
			libc, inline, lined)
	}
	for _, s := range prof.Sample {
		if first(s.Label["comm"]) == "cat" && (len(s.NumLabel["pid"]) != 1 || s.NumLabel["pid"][0] != 200) {
			t.Errorf("cat sample pid label %v, want 200", s.NumLabel["pid"])
		}
	}
}

func TestPprofSamples(t *testing.T) {
	p := &Profile{Measure: Measure{Kind: KindSamples, PeriodNanos: 10_000_000}, Probes: []string{"cpu"},
		Samples: []Sample{{Probe: "cpu", PID: 1, Comm: "x", User: StackOf(&Frame{Name: "f"}), Count: 7}}}
	prof := writePprof(t, p)
	if len(prof.SampleType) != 2 || prof.SampleType[1].Type != "cpu" || prof.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("sample types %v, want samples/count cpu/nanoseconds", prof.SampleType)
	}
	if v := prof.Sample[0].Value; v[0] != 7 || v[1] != 70_000_000 {
		t.Errorf("values %v, want [7 70000000]", v)
	}
	if prof.Period != 10_000_000 || prof.PeriodType.Type != "cpu" {
		t.Errorf("period %d %v, want 10ms of cpu", prof.Period, prof.PeriodType)
	}
}

// Start and Duration become time_nanos and duration_nanos; unset, both stay 0.
func TestPprofTime(t *testing.T) {
	start := time.Date(2025, 6, 7, 8, 9, 10, 11, time.UTC)
	for _, tc := range []struct {
		start    time.Time
		dur      time.Duration
		time, ns int64
	}{
		{time.Time{}, 0, 0, 0},
		{start, 15 * time.Second, start.UnixNano(), 15e9},
	} {
		p := &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{"a"}, Start: tc.start, Duration: tc.dur,
			Samples: []Sample{{Probe: "a", Comm: "x", User: StackOf(&Frame{Name: "f"}), Count: 1}}}
		prof := writePprof(t, p)
		if prof.TimeNanos != tc.time || prof.DurationNanos != tc.ns {
			t.Errorf("start %v: time %d duration %d, want %d %d", tc.start, prof.TimeNanos, prof.DurationNanos, tc.time, tc.ns)
		}
	}
}

// TestGoToolPprof checks that `go tool pprof -top` and `-traces` accept the
// output (the first run builds pprof into the Go cache).
func TestGoToolPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping go tool pprof")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	if err := Write(smallProfile(), plan(t, path), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"-top", "-traces"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		out, err := exec.CommandContext(ctx, goBin, "tool", "pprof", mode, path).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("go tool pprof %s: %v\n%s", mode, err, out)
		}
		if !bytes.Contains(out, []byte("malloc")) {
			t.Errorf("go tool pprof %s output lacks malloc:\n%s", mode, out)
		}
	}
}

func TestGroupFrames(t *testing.T) {
	f := func(name string, addr uint64, inline bool) *Frame {
		return &Frame{Name: name, Address: addr, Inline: inline}
	}
	tests := []struct {
		name   string
		frames []*Frame
		want   string
	}{
		{"none", nil, ""},
		{"physical", []*Frame{f("a", 1, false), f("b", 2, false)}, "[a] [b]"},
		{"inline", []*Frame{f("a", 1, false), f("b", 2, false), f("c", 2, true), f("d", 2, true), f("e", 3, false)},
			"[a] [b c d] [e]"},
		{"inline other address", []*Frame{f("a", 1, false), f("b", 2, true)}, "[a] [b]"},
		{"leading inline", []*Frame{f("a", 1, true), f("b", 1, true)}, "[a b]"},
	}
	for _, tt := range tests {
		var parts []string
		for _, g := range groupFrames(tt.frames, false) {
			var names []string
			for _, fr := range g.frames {
				names = append(names, fr.Name)
			}
			parts = append(parts, "["+strings.Join(names, " ")+"]")
		}
		if got := strings.Join(parts, " "); got != tt.want {
			t.Errorf("%s: groups %s, want %s", tt.name, got, tt.want)
		}
	}
}
