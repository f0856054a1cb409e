package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// referenceCollapsed is WriteCollapsed as it was before the stack tree:
// every sample's names joined, merged by the joined text, sorted.
func referenceCollapsed(p *Profile, opts Options) string {
	names := frameNames{opts: opts}
	sums := map[string]uint64{}
	for i := range p.Samples {
		s := &p.Samples[i]
		if w := p.Weight(s); w > 0 {
			sums[joinNames(sampleFrames(s, &names))] += w
		}
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, sums[k])
	}
	return b.String()
}

// The tree's lines are the joined names' lines, in the same order, also
// where names are prefixes of each other followed by bytes that sort
// between ' ' and ';' ("foo", "foo.cold", "foo (inlined)", "foo;..."),
// and where a stack ends at a frame others go through.
func TestStackTreeMatchesJoinedLines(t *testing.T) {
	names := []string{"foo", "foo.cold", "foo bar", "fo", "foo:x", "a", "b", "[unknown]", "foo0", "foo~"}
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 1))
		var fs Interner
		frames := make([]*Frame, 0, 2*len(names))
		for _, n := range names {
			frames = append(frames, fs.Intern(Frame{Name: n}), fs.Intern(Frame{Name: n, Inline: true}))
		}
		p := &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{"p", "p.q"}}
		for range 200 {
			user := make([]*Frame, r.IntN(5))
			for i := range user {
				user[i] = frames[r.IntN(len(frames))]
			}
			var kernel []*Frame
			if r.IntN(4) == 0 {
				kernel = []*Frame{frames[r.IntN(len(frames))]}
			}
			p.Samples = append(p.Samples, Sample{Probe: p.Probes[r.IntN(2)], Comm: names[r.IntN(3)],
				PID: r.IntN(3), User: fs.Stack(user), Kernel: fs.Stack(kernel), Count: uint64(r.IntN(3))})
		}
		for _, opts := range []Options{{WithProbe: true}, {}} {
			var buf bytes.Buffer
			if err := WriteCollapsed(&buf, p, opts); err != nil {
				t.Fatal(err)
			}
			if want := referenceCollapsed(p, opts); buf.String() != want {
				t.Fatalf("seed %d, %+v: got\n%s\nwant\n%s", seed, opts, buf.String(), want)
			}
		}
	}
}

func TestCompareJoined(t *testing.T) {
	tests := []struct {
		a     string
		semiA bool
		b     string
		semiB bool
	}{
		{"foo", false, "foo", true},
		{"foo", false, "foo.cold", false},
		{"foo.cold", false, "foo", true},
		{"foo", true, "foo~", false},
		{"fo", true, "foo", false},
		{"a", true, "b", false},
		{"foo bar", true, "foo", false},
	}
	for _, tt := range tests {
		join := func(s string, semi bool) string {
			if semi {
				return s + ";"
			}
			return s
		}
		want := strings.Compare(join(tt.a, tt.semiA), join(tt.b, tt.semiB))
		if got := compareJoined(tt.a, tt.semiA, tt.b, tt.semiB); got != want {
			t.Errorf("compareJoined(%q, %v, %q, %v) = %d, want %d", tt.a, tt.semiA, tt.b, tt.semiB, got, want)
		}
		if got := compareJoined(tt.b, tt.semiB, tt.a, tt.semiA); got != -want {
			t.Errorf("compareJoined(%q, %v, %q, %v) = %d, want %d", tt.b, tt.semiB, tt.a, tt.semiA, got, -want)
		}
	}
}
