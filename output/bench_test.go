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
