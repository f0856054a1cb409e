package output

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// hist counts values into a Histogram as the kernel does.
func hist(values ...uint64) Histogram {
	var h Histogram
	for _, v := range values {
		i := 0
		for x := v; x > 1; x >>= 1 {
			i++
		}
		h.Counts[i]++
		h.Sums[i] += v
	}
	return h
}

func TestQuantile(t *testing.T) {
	ms := uint64(1e6)
	tests := []struct {
		name string
		h    Histogram
		q    float64
		want uint64
	}{
		{"empty", Histogram{}, 0.5, 0},
		{"one bucket: its mean", hist(10*ms, 10*ms, 11*ms, 11*ms), 0.5, 10_500_000},
		{"median in the low bucket", hist(1000, 1000, 1000, 5000), 0.5, 1000},
		{"p99 in the high bucket", hist(1000, 1000, 1000, 5000), 0.99, 5000},
		{"p75 exactly at a bucket's end", hist(1000, 1000, 1000, 5000), 0.75, 1000},
		{"zeros", hist(0, 0, 1), 0.5, 0},
		{"the top bucket", hist(1 << 63), 0.5, 1 << 63},
	}
	for _, tt := range tests {
		if got := tt.h.Quantile(tt.q); got != tt.want {
			t.Errorf("%s: Quantile(%v) = %d, want %d", tt.name, tt.q, got, tt.want)
		}
	}
}

func TestSummaryLines(t *testing.T) {
	ms := uint64(1e6)
	s := ProbeSummary{Label: "./fx:nap", Calls: 20, Total: 205 * ms, Max: 11 * ms,
		Hist: hist(slices.Repeat([]uint64{10 * ms, 10_500_000}, 10)...), Stacked: 20, MinLatency: 5 * ms,
		Unwound: 3, Exited: 1}
	got := strings.Join(SummaryLines(s, KindLatency, "ns"), "\n") + "\n"
	want := `./fx:nap: 20 calls, 205 ms in all, mean 10.2 ms, p50 10.2 ms, p90 10.2 ms, p99 10.2 ms, max 11 ms
./fx:nap: 20 calls of at least 5 ms, with their stacks
                    nsecs : count     distribution
    8388608 -> 16777215    : 20        |****************************************|
./fx:nap: not timed: 3 never returned (longjmp, exception or panic past them), 1 ended by their thread's exit
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	w := ProbeSummary{Label: "libc:malloc", Calls: 4, Total: 3072, Max: 1024, Hist: hist(24, 1000, 1024, 1024)}
	got = strings.Join(SummaryLines(w, KindWeight, "bytes"), "\n")
	for _, part := range []string{"libc:malloc: 4 calls, 3,072 bytes in all, mean 768 bytes, p50 1,000 bytes, p90 1,024 bytes",
		"bytes : count", "16 -> 31", "512 -> 1023", "1024 -> 2047"} {
		if !strings.Contains(got, part) {
			t.Errorf("weight summary lacks %q:\n%s", part, got)
		}
	}
	if none := SummaryLines(ProbeSummary{Label: "x"}, KindLatency, "ns"); len(none) != 1 || none[0] != "x: 0 calls" {
		t.Errorf("no calls: %q", none)
	}
}

// latencyProfile is smallProfile's malloc stacks timed: Count calls,
// Value nanoseconds.
func latencyProfile(kind string) *Profile {
	p := smallProfile()
	p.Kind = kind
	if kind == KindWeight {
		p.ValueType, p.ValueUnit = "arg0", "bytes"
	}
	for i := range p.Samples {
		p.Samples[i].Value = p.Samples[i].Count * 1000
	}
	p.Samples[1].Value = 0 // calls that weigh nothing (malloc(0)) draw nothing
	return p
}

// Folded lines and flamegraphs weigh Value, not Count.
func TestCollapsedWeighsValue(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCollapsed(&b, latencyProfile(KindLatency), Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{";a;b;malloc 70000\n", ";__x64_sys_openat_[k] 7000\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("collapsed lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "libfoo.so+0x1234") {
		t.Errorf("a stack weighing 0 was written:\n%s", got)
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, latencyProfile(KindLatency), Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "3 probes — 90,000 ns (90 µs)") {
		t.Errorf("flamegraph title does not give the time in ns")
	}
}

func TestPprofMeasures(t *testing.T) {
	for _, tt := range []struct {
		kind, vtype, unit string
	}{{KindLatency, "time", "nanoseconds"}, {KindWeight, "arg0", "bytes"}} {
		prof := writePprof(t, latencyProfile(tt.kind))
		types := []string{prof.SampleType[0].Type + "/" + prof.SampleType[0].Unit, prof.SampleType[1].Type + "/" + prof.SampleType[1].Unit}
		if !slices.Equal(types, []string{"calls/count", tt.vtype + "/" + tt.unit}) || prof.DefaultSampleType != tt.vtype {
			t.Errorf("%s: sample types %v, default %q", tt.kind, types, prof.DefaultSampleType)
		}
		var calls, value int64
		for _, s := range prof.Sample {
			calls += s.Value[0]
			value += s.Value[1]
		}
		if calls != 120 || value != 90_000 {
			t.Errorf("%s: %d calls, value %d; want 120 and 90000", tt.kind, calls, value)
		}
	}
}
