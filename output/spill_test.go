package output

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/internal/container"
)

// spillSamples are n random samples (of few probes, comms and pids, some
// in a container, stacks of few frames with every field set) in fs.
func spillSamples(rng *rand.Rand, fs *Interner, n int) []Sample {
	frame := func(kernel bool) *Frame {
		i := rng.IntN(40)
		return fs.Intern(Frame{Name: fmt.Sprintf("f%d", i%30), Module: fmt.Sprintf("/lib/m%d.so", i%3),
			Offset: uint64(i * 16), File: "x.c", Line: i % 7, Kernel: kernel, Inline: i%5 == 0,
			Address: uint64(0x1000 + i), BuildID: fmt.Sprintf("%02x", i%3)})
	}
	stack := func(kernel bool, max int) Stack {
		var fr []*Frame
		for range rng.IntN(max) {
			fr = append(fr, frame(kernel))
		}
		return fs.Stack(fr)
	}
	out := make([]Sample, n)
	for i := range out {
		s := Sample{Probe: []string{"sample", "libc:malloc"}[rng.IntN(2)], Comm: []string{"ls", "sh", ""}[rng.IntN(3)],
			PID: 1 + rng.IntN(3), User: stack(false, 4), Kernel: stack(true, 3), Count: 1 + rng.Uint64N(9), Value: rng.Uint64N(1000)}
		if rng.IntN(4) == 0 {
			s.Container = container.Info{ID: strings.Repeat("ab", 32), Cgroup: "/system.slice/x"}
		}
		out[i] = s
	}
	return out
}

// sampleLines are m's samples as sorted lines naming every field.
func sampleLines(samples []Sample) []string {
	var out []string
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s|%s|%d|%+v|%s|%s|%d|%d", s.Probe, s.Comm, s.PID, s.Container,
			frameText(s.User), frameText(s.Kernel), s.Count, s.Value))
	}
	slices.Sort(out)
	return out
}

func frameText(s Stack) string {
	var b strings.Builder
	for _, f := range s.Frames() {
		fmt.Fprintf(&b, "%+v;", *f)
	}
	return b.String()
}

// Samples spilled over several rounds (each with an Interner of its own,
// samples recurring across rounds) and loaded back at the end beside the
// last round's are the samples one Merged makes of them all.
func TestSpillRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sp, err := OpenSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var all Merged
	var allFS Interner
	var m Merged
	var fs Interner
	for round := range 5 {
		fs = Interner{}
		for _, s := range spillSamples(rng, &fs, 300) {
			m.Add(s)
			s.User, s.Kernel = StackOf(s.User.Frames()...), StackOf(s.Kernel.Frames()...)
			all.Add(reintern(&allFS, s))
		}
		if round < 4 {
			if err := sp.Add(&m); err != nil {
				t.Fatal(err)
			}
			if m.Len() != 0 {
				t.Fatalf("round %d: %d samples left in memory after Add", round, m.Len())
			}
		}
	}
	if over, err := sp.Load(&m, &fs); err != nil || over != 0 {
		t.Fatalf("Load: %v, %d left out", err, over)
	}
	got, want := sampleLines(m.Samples()), sampleLines(all.Samples())
	if !slices.Equal(got, want) {
		t.Errorf("loaded %d samples, want %d:\n%s", len(got), len(want), lineDiff(got, want))
	}
	if sp.Len() >= 4*300 || sp.Bytes() == 0 {
		t.Errorf("%d samples spilled in %d bytes: want fewer than written (recurring ones counted in memory)", sp.Len(), sp.Bytes())
	}
}

// reintern is s with its frames and stacks interned in fs.
func reintern(fs *Interner, s Sample) Sample {
	in := func(st Stack) Stack {
		var fr []*Frame
		for _, f := range st.Frames() {
			fr = append(fr, fs.Intern(*f))
		}
		return fs.Stack(fr)
	}
	s.User, s.Kernel = in(s.User), in(s.Kernel)
	return s
}

func lineDiff(got, want []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "  missing %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "  extra %s\n", l)
		}
	}
	return b.String()
}

// A write that fails (here: a file opened read-only; a full disk) leaves
// the samples in memory and nothing spilled.
func TestSpillWriteFails(t *testing.T) {
	path := t.TempDir() + "/ro"
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sp := &Spill{f: f, seed: maphash.MakeSeed(), seen: map[uint64]uint32{}}
	defer sp.Close()
	var fs Interner
	var m Merged
	for _, s := range spillSamples(rand.New(rand.NewPCG(3, 4)), &fs, 50) {
		m.Add(s)
	}
	before := sampleLines(m.Samples())
	if err := sp.Add(&m); err == nil {
		t.Fatal("Add to a read-only file: no error")
	}
	if after := sampleLines(m.Samples()); !slices.Equal(after, before) || sp.Len() != 0 || sp.Bytes() != 0 {
		t.Errorf("after a failed Add: %d samples in memory (want %d), %d spilled in %d bytes (want 0)",
			len(after), len(before), sp.Len(), sp.Bytes())
	}
}

// Full counts the samples spilled; Load leaves out those past Max and
// says how many counts they had.
func TestSpillMax(t *testing.T) {
	sp, err := OpenSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var fs Interner
	st := func(name string) Stack { return fs.Stack([]*Frame{fs.Intern(Frame{Name: name})}) }
	m := Merged{Max: 2}
	m.Add(Sample{Probe: "p", Comm: "a", User: st("x"), Count: 1})
	m.Add(Sample{Probe: "p", Comm: "a", User: st("y"), Count: 2})
	if err := sp.Add(&m); err != nil {
		t.Fatal(err)
	}
	if !m.Full() {
		t.Errorf("Full() = false with 2 of Max 2 spilled")
	}
	fs = Interner{}
	m = Merged{Max: 2}
	m.Add(Sample{Probe: "p", Comm: "a", User: st("z"), Count: 5})
	over, err := sp.Load(&m, &fs)
	if err != nil || over != 2 || m.Len() != 2 {
		t.Errorf("Load: %v, %d counts left out, %d samples; want 2 left out, 2 samples", err, over, m.Len())
	}
}

// spilled is a Spill of n random samples and its file's bytes.
func spilled(t testing.TB, seed uint64, n int) (*Spill, []byte) {
	sp, err := OpenSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	var fs Interner
	var m Merged
	for _, s := range spillSamples(rand.New(rand.NewPCG(seed, seed+1)), &fs, n) {
		m.Add(s)
	}
	if err := sp.Add(&m); err != nil {
		t.Fatal(err)
	}
	good := make([]byte, sp.end)
	sp.f.ReadAt(good, 0)
	return sp, good
}

// A damaged file is an error, not a panic or a huge allocation.
func TestSpillDamaged(t *testing.T) {
	sp, good := spilled(t, 5, 100)
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"cut", good[:len(good)/2]},
		{"huge string", append(append([]byte{}, good[:2]...), 0, 0xff, 0xff, 0xff, 0xff, 0x0f)},
		{"bad reference", append(append([]byte{}, good[:1]...), 0x7f)},
		{"more samples", append([]byte{0xff, 0x01}, good[1:]...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := loadBytes(t, sp, c.data); err == nil {
				t.Errorf("no error")
			}
		})
	}
}

// loadBytes loads a copy of sp whose file holds data.
func loadBytes(t *testing.T, sp *Spill, data []byte) error {
	f, err := os.CreateTemp(t.TempDir(), "spill")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(data)
	cp := *sp
	cp.f, cp.end = f, int64(len(data))
	var m Merged
	_, err = cp.Load(&m, &Interner{})
	return err
}

func FuzzSpillLoad(f *testing.F) {
	sp, good := spilled(f, 7, 20)
	f.Add(good)
	f.Add([]byte{1, 0, 0, 3, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, data []byte) {
		loadBytes(t, sp, data)
	})
}

// BenchmarkSpillHeld spills 100K distinct samples (of 20 frames, as
// BenchmarkMergedAdd's) and reports the heap a long run still holds for
// each: its hash and totals, where a Merged holds its count, frames and
// tree nodes.
func BenchmarkSpillHeld(b *testing.B) {
	var held uint64
	for b.Loop() {
		sp, err := OpenSpill(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for chunk := range 10 {
			var fs Interner
			var m Merged
			main := fs.Intern(Frame{Name: "main"})
			for i := range 10_000 {
				m.Add(Sample{Probe: "sample", Comm: "ls", Count: 1,
					User: fs.Stack([]*Frame{main, fs.Intern(Frame{Name: "f", Address: uint64(chunk*10_000 + i)})})})
			}
			if err := sp.Add(&m); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = after.HeapAlloc - before.HeapAlloc
		b.ReportMetric(float64(sp.Bytes())/100_000, "file-B/sample")
		sp.Close()
	}
	b.ReportMetric(float64(held)/100_000, "B/sample")
}
