package output

import (
	"runtime"
	"testing"
)

func TestMerged(t *testing.T) {
	var fs Interner
	st := fs.Stack([]*Frame{fs.Intern(Frame{Name: "main"}), fs.Intern(Frame{Name: "work"})})
	other := fs.Stack([]*Frame{fs.Intern(Frame{Name: "main"})})
	tests := []struct {
		name string
		max  int
		add  []Sample
		want []Sample
		left int // samples Add leaves out
	}{
		{"pids merge", 0, []Sample{
			{Probe: "p", Comm: "ls", PID: 7, User: st, Count: 1, Value: 10},
			{Probe: "p", Comm: "ls", PID: 8, User: st, Count: 2, Value: 5},
		}, []Sample{{Probe: "p", Comm: "ls", User: st, Count: 3, Value: 15}}, 0},
		{"stacks, comms and probes apart", 0, []Sample{
			{Probe: "p", Comm: "ls", PID: 7, User: st, Count: 1},
			{Probe: "p", Comm: "ls", PID: 7, User: other, Count: 1},
			{Probe: "p", Comm: "sh", PID: 7, User: st, Count: 1},
			{Probe: "q", Comm: "ls", PID: 7, User: st, Count: 1},
		}, []Sample{
			{Probe: "p", Comm: "ls", User: st, Count: 1},
			{Probe: "p", Comm: "ls", User: other, Count: 1},
			{Probe: "p", Comm: "sh", User: st, Count: 1},
			{Probe: "q", Comm: "ls", User: st, Count: 1},
		}, 0},
		{"comm-less samples keep their pid", 0, []Sample{
			{Probe: "p", PID: 7, User: st, Count: 1},
			{Probe: "p", PID: 8, User: st, Count: 1},
			{Probe: "p", PID: 7, User: st, Count: 1},
		}, []Sample{{Probe: "p", PID: 7, User: st, Count: 2}, {Probe: "p", PID: 8, User: st, Count: 1}}, 0},
		{"past Max only merges", 1, []Sample{
			{Probe: "p", Comm: "ls", PID: 7, User: st, Count: 1},
			{Probe: "p", Comm: "ls", PID: 7, User: other, Count: 1},
			{Probe: "p", Comm: "ls", PID: 8, User: st, Count: 1},
		}, []Sample{{Probe: "p", Comm: "ls", User: st, Count: 2}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Merged{Max: tt.max}
			left := 0
			for _, s := range tt.add {
				if !m.Add(s) {
					left++
				}
			}
			if full := tt.max > 0 && len(m.Samples()) == tt.max; m.Full() != full {
				t.Errorf("Full() = %v, want %v", m.Full(), full)
			}
			if left != tt.left {
				t.Errorf("%d samples left out, want %d", left, tt.left)
			}
			got := m.Samples()
			if len(got) != len(tt.want) {
				t.Fatalf("%d samples, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Probe != w.Probe || g.Comm != w.Comm || g.PID != w.PID || g.Count != w.Count ||
					g.Value != w.Value || g.User != w.User {
					t.Errorf("sample %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// BenchmarkMergedAdd merges 100K distinct samples (stacks of one Interner)
// and reports the heap they hold per sample: a long run's merged samples
// of processes gone grow with the distinct stacks the machine runs.
func BenchmarkMergedAdd(b *testing.B) {
	var fs Interner
	main := fs.Intern(Frame{Name: "main"})
	stacks := make([]Stack, 100_000)
	for i := range stacks {
		stacks[i] = fs.Stack([]*Frame{main, fs.Intern(Frame{Name: "f", Address: uint64(i)})})
	}
	var held uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var m Merged
		for i, st := range stacks {
			m.Add(Sample{Probe: "sample", Comm: "ls", PID: i, User: st, Count: 1})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(&m)
	}
	b.ReportMetric(float64(held)/float64(len(stacks)), "B/sample")
}
