package output

import (
	"io"
	"testing"
)

// countingWriter counts bytes written.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// benchmarkWriter renders a 10K-stack profile and reports ms per render and
// output bytes.
func benchmarkWriter(b *testing.B, write func(io.Writer, *Profile, Options) error) {
	p := syntheticProfile(10_000, 24)
	var out countingWriter
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out = countingWriter{}
		if err := write(&out, p, Options{WithProbe: true, Lines: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
	b.ReportMetric(float64(out.n), "bytes")
}

func BenchmarkSVG10K(b *testing.B)    { benchmarkWriter(b, WriteSVG) }
func BenchmarkFolded10K(b *testing.B) { benchmarkWriter(b, WriteCollapsed) }
func BenchmarkPprof10K(b *testing.B)  { benchmarkWriter(b, WritePprof) }

// manyStacksProfile is n distinct stacks down levels binary choices, as
// manystacks under a uprobe on leaf gives (tests/bench/13-many-stacks-finish.sh):
// stack i takes left or right at level k by bit k of i, each followed by
// step; the samples share their frames and stacks through one Interner.
func manyStacksProfile(n, levels int) *Profile {
	var fs Interner
	root := []*Frame{fs.Intern(Frame{Name: "_start"}), fs.Intern(Frame{Name: "main"})}
	left, right := fs.Intern(Frame{Name: "left"}), fs.Intern(Frame{Name: "right"})
	step, leaf := fs.Intern(Frame{Name: "step"}), fs.Intern(Frame{Name: "leaf"})
	p := &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{"leaf"}}
	frames := make([]*Frame, 0, 2*levels+4)
	for i := range n {
		frames = append(frames[:0], root...)
		for k := range levels {
			if i>>k&1 == 1 {
				frames = append(frames, right, step)
			} else {
				frames = append(frames, left, step)
			}
		}
		frames = append(frames, leaf)
		p.Samples = append(p.Samples, Sample{Probe: "leaf", Comm: "manystacks", PID: 1, User: fs.Stack(frames), Count: 1})
	}
	return p
}

// BenchmarkFoldedManyStacks writes 256K distinct stacks of 39 frames:
// the bytes a render allocates are the collapsed writer's own memory.
func BenchmarkFoldedManyStacks(b *testing.B) {
	p := manyStacksProfile(1<<18, 18)
	var out countingWriter
	b.ReportAllocs()
	for b.Loop() {
		out = countingWriter{}
		if err := WriteCollapsed(&out, p, Options{WithProbe: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.n), "bytes")
}
