package output

import (
	"bytes"
	"testing"
)

func TestFrameName(t *testing.T) {
	tests := []struct {
		name   string
		f      Frame
		kernel bool
		lines  bool
		want   string
	}{
		{"named", Frame{Name: "malloc"}, false, false, "malloc"},
		{"unsymbolized", Frame{Module: "/usr/lib/libfoo.so.1", Offset: 0x1a2b}, false, false, "libfoo.so.1+0x1a2b"},
		{"address only", Frame{Address: 0xdead}, false, false, "0xdead"},
		{"nothing known", Frame{}, false, false, "[unknown]"},
		{"kernel slice", Frame{Name: "vfs_read"}, true, false, "vfs_read_[k]"},
		{"kernel flag", Frame{Name: "vfs_read", Kernel: true}, false, false, "vfs_read_[k]"},
		{"kernel unsymbolized", Frame{Module: "ext4", Offset: 0x10}, true, false, "ext4+0x10_[k]"},
		{"kernel marker", Frame{Name: "[sleep]"}, true, false, "[sleep]"},
		{"kernel bracketed at an address", Frame{Name: "[vdso]", Address: 0x10}, true, false, "[vdso]_[k]"},
		{"inline", Frame{Name: "inner", Inline: true}, false, false, "inner (inlined)"},
		{"lines", Frame{Name: "f", File: "a.c", Line: 3}, false, true, "f:a.c:3"},
		{"lines no line", Frame{Name: "f", File: "a.c"}, false, true, "f:a.c"},
		{"lines unknown file", Frame{Name: "f", Line: 3}, false, true, "f"},
		{"lines off", Frame{Name: "f", File: "a.c", Line: 3}, false, false, "f"},
		{"all", Frame{Name: "g", File: "b.h", Line: 9, Inline: true}, true, true, "g (inlined):b.h:9_[k]"},
		{"semicolon", Frame{Name: "<[u8; 4] as Debug>::fmt"}, false, false, "<[u8, 4] as Debug>::fmt"},
		{"newline", Frame{Name: "a\nb\r\tc"}, false, false, "a b  c"},
		{"bad utf8", Frame{Name: "a\xffb"}, false, false, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FrameName(tt.f, tt.kernel, tt.lines); got != tt.want {
				t.Errorf("FrameName = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteCollapsedGolden(t *testing.T) {
	tests := []struct {
		golden string
		opts   Options
	}{
		{"small.folded", Options{}},
		{"small-probe.folded", Options{WithProbe: true}},
		{"small-lines.folded", Options{Lines: true}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteCollapsed(&buf, smallProfile(), tt.opts); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, buf.Bytes())
		})
	}
}

func TestWriteCollapsedMergesAndSorts(t *testing.T) {
	p := &Profile{Measure: Measure{Kind: KindHits}, Probes: []string{"p"}, Samples: []Sample{
		{Probe: "p", Comm: "z", PID: 1, User: StackOf(&Frame{Name: "b"}), Count: 1},
		{Probe: "p", Comm: "a", PID: 1, User: StackOf(&Frame{Name: "b"}), Count: 2},
		{Probe: "p", Comm: "z", PID: 2, User: StackOf(&Frame{Name: "b"}), Count: 3},
		{Probe: "p", Comm: "a", PID: 1, Count: 4},
	}}
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, p, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "a 4\na;b 2\nz;b 4\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteCollapsedEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, &Profile{Probes: []string{"p"}}, Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("empty profile wrote %q", buf.String())
	}
}

// Samples that differ only in pid (a program's processes sharing one
// interned stack) make one line, their weights summed; samples that
// differ in probe, comm, container or stack make lines of their own, and
// so do comm-less samples of two pids (their comm frame is "[pid N]").
func TestWriteCollapsedMergesByStack(t *testing.T) {
	var fs Interner
	st := fs.Stack([]*Frame{fs.Intern(Frame{Name: "main"}), fs.Intern(Frame{Name: "malloc"})})
	other := fs.Stack([]*Frame{fs.Intern(Frame{Name: "main"})})
	base := Sample{Probe: "p", Comm: "ls", User: st, Count: 1}
	vary := []func(*Sample){
		func(s *Sample) { s.PID = 7; s.Count = 2 }, // merged with base
		func(s *Sample) { s.Probe = "q" },
		func(s *Sample) { s.Comm = "git" },
		func(s *Sample) { s.Container.Cgroup = "/a" },
		func(s *Sample) { s.User = other },
		func(s *Sample) { s.Kernel = other },
		func(s *Sample) { s.Comm, s.PID = "", 1 },
		func(s *Sample) { s.Comm, s.PID = "", 2 },
		func(s *Sample) { s.Count = 0 }, // weighs nothing: left out
	}
	p := &Profile{Measure: Measure{Kind: KindHits}, Samples: []Sample{base}}
	for _, v := range vary {
		s := base
		v(&s)
		p.Samples = append(p.Samples, s)
	}
	var buf bytes.Buffer
	if err := WriteCollapsed(&buf, p, Options{WithProbe: true}); err != nil {
		t.Fatal(err)
	}
	want := `p;[cgroup /a];ls;main;malloc 1
p;[pid 1];main;malloc 1
p;[pid 2];main;malloc 1
p;git;main;malloc 1
p;ls;main 1
p;ls;main;malloc 3
p;ls;main;malloc;main_[k] 1
q;ls;main;malloc 1
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
