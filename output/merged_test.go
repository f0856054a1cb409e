package output

import "testing"

func TestMerged(t *testing.T) {
	var fs Frames
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
