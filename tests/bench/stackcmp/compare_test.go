package main

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// prof builds a Profile from "comm;root;...;leaf count" lines, where a
// frame "mod+0xOFF" is unnamed.
func prof(t *testing.T, lines ...string) Profile {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("sample;" + l + "\n")
	}
	p, err := ParseProbee(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokens(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"unnamed frames become one token", "xz;xz+0x10;main;0x40;f 1", []string{"[unknown]", "main", "[unknown]", "f"}},
		{"unnamed caller of __libc_start_main is _start", "xz;xz+0x3ac0;__libc_start_main;main 1", []string{"_start", "__libc_start_main", "main"}},
		{"unnamed caller of _dl_start is ld.so's _start", "xz;ld-linux-x86-64.so.2+0x1ab77;_dl_start;dl_main 1", []string{"_start", "_dl_start", "dl_main"}},
		{"only at the root", "xz;a;xz+0x3ac0;__libc_start_main 1", []string{"a", "[unknown]", "__libc_start_main"}},
		{"only when unnamed", "xz;b;__libc_start_main 1", []string{"b", "__libc_start_main"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokens(prof(t, tt.in)[0]); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("tokens = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLendNames(t *testing.T) {
	p := prof(t, "a;ld-linux-x86-64.so.2+0x1ab77;x+0x5;main 1")
	perf := Profile{{Comm: "a", Count: 1, Frames: []Frame{
		{Name: "_start", Module: "ld-linux-x86-64.so.2", Offset: 0x1ab77},
		{Module: "x", Offset: 0x5}, // perf could not name it either
		{Name: "other", Module: "x", Offset: 0x6},
	}}}
	LendNames(p, perf)
	want := []Frame{{Name: "_start", Module: "ld-linux-x86-64.so.2", Offset: 0x1ab77}, {Module: "x", Offset: 0x5}, {Name: "main"}}
	if !reflect.DeepEqual(p[0].Frames, want) {
		t.Errorf("got %+v, want %+v", p[0].Frames, want)
	}
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  Stats
	}{
		{"program and ld.so entries", []string{"a;_start;main;f 3", "a;_dl_start_user;_dl_init 1", "a;main;f 1"},
			Stats{Samples: 5, Reached: 4, Frames: 3*3 + 2 + 2}},
		{"thread entries", []string{"t;clone3;start_thread;run 2", "t;start_thread;run 1", "t;clone;g 1", "t;__clone3;g 1", "t;run 5"},
			Stats{Samples: 10, Reached: 5, Frames: 6 + 2 + 2 + 2 + 5, LeafOnly: 5}},
		{"stripped entry", []string{"xz;xz+0x3ac0;__libc_start_main;main 2", "xz;xz+0x3ac0;main 1"},
			Stats{Samples: 3, Reached: 2, Frames: 6 + 2}},
		{"truncated and kernel-only stacks", []string{"a;[truncated];f 1", "a;do_syscall_64_[k] 1"},
			Stats{Samples: 2, Reached: 0, Frames: 1, LeafOnly: 1}},
		{"JS frames count once per sample", []string{"node;JS:*fib x;JS:*fib x 2", "node;Builtins_X;JS:~g y 1", "node;main 1"},
			Stats{Samples: 4, Frames: 4 + 2 + 1, JS: 3, LeafOnly: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Measure(prof(t, tt.lines...)); got != tt.want {
				t.Errorf("Measure = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		from string
		want float64
	}{
		{name: "same", a: []string{"x;_start;main;f 3", "x;_start;g 1"}, b: []string{"x;_start;main;f 30", "x;_start;g 10"}, want: 1},
		{name: "leaf ignored", a: []string{"x;_start;main;f 1"}, b: []string{"x;_start;main;g 1"}, want: 1},
		{name: "disjoint", a: []string{"x;_start;main;f 1"}, b: []string{"x;main;f 1"}, want: 0},
		{name: "comm counts", a: []string{"x;_start;f 1"}, b: []string{"y;_start;f 1"}, want: 0},
		{name: "min of shares", a: []string{"x;a;f 3", "x;b;f 1"}, b: []string{"x;a;f 1", "x;b;f 1"}, want: 0.5 + 0.25},
		{name: "unknown matches unknown", a: []string{"x;lib.so+0x10;f 1"}, b: []string{"x;[unknown];f 1"}, want: 1},
		{name: "from cuts rootward frames", a: []string{"x;_start;__libc_start_main;L;main;f 2", "x;clone3;w 2"},
			b: []string{"x;L;main;f 1", "x;clone3;w 1"}, from: "L", want: 1},
		{name: "from with a prefix", a: []string{"x;_start;run<A>::c1;main;f 2"},
			b: []string{"x;run<A>::c1;main;f 1"}, from: "run<*", want: 1},
		{name: "from is exact without *", a: []string{"x;_start;run<A>::c1;main;f 2"},
			b: []string{"x;run<A>::c1;main;f 1"}, from: "run<", want: 0},
		{name: "empty profiles", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Overlap(prof(t, tt.a...), prof(t, tt.b...), tt.from)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Overlap = %v, want %v", got, tt.want)
			}
			if back := Overlap(prof(t, tt.b...), prof(t, tt.a...), tt.from); math.Abs(back-got) > 1e-9 {
				t.Errorf("Overlap is not symmetric: %v one way, %v the other", got, back)
			}
		})
	}
}

// InnerOverlap compares only the leaf's n innermost callers: chains cut
// at different depths toward the root agree, different callers do not.
func TestInnerOverlap(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		n    int
		want float64
	}{
		{name: "root cut", a: []string{"x;_start;__libc_start_main;main;a;b;f 1"}, b: []string{"x;main;a;b;f 1"}, n: 2, want: 1},
		{name: "deeper than n differs", a: []string{"x;_start;m;a;b;f 1"}, b: []string{"x;_start;z;a;b;f 1"}, n: 2, want: 1},
		{name: "within n differs", a: []string{"x;_start;m;a;b;f 1"}, b: []string{"x;_start;m;z;b;f 1"}, n: 2, want: 0},
		{name: "short chains whole", a: []string{"x;b;f 1", "x;_start;c;b;f 1"}, b: []string{"x;b;f 1", "x;c;b;f 1"}, n: 3, want: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InnerOverlap(prof(t, tt.a...), prof(t, tt.b...), tt.n); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("InnerOverlap = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTopDiffs(t *testing.T) {
	a := prof(t, "x;a;f 3", "x;b;f 1")
	b := prof(t, "x;a;f 1", "x;c;f 1")
	want := []ShareDiff{{"x;c", 0, 0.5}, {"x;a", 0.75, 0.5}, {"x;b", 0.25, 0}}
	if got := TopDiffs(a, b, "", 5); !reflect.DeepEqual(got, want) {
		t.Errorf("TopDiffs = %+v, want %+v", got, want)
	}
	if got := TopDiffs(a, b, "", 1); len(got) != 1 {
		t.Errorf("TopDiffs(1) gave %d chains", len(got))
	}
}

// perf -g does not see the caller of a leaf without a frame: probee's
// stacks lose that frame, and one-frame stacks stay.
func TestHideLeafCaller(t *testing.T) {
	p := prof(t, "n;main;js;GetParentProcessId;getppid 2", "n;getppid 1")
	HideLeafCaller(p)
	if got := Overlap(p, prof(t, "n;main;js;getppid 2", "n;getppid 1"), ""); math.Abs(got-1) > 1e-9 {
		t.Errorf("Overlap with perf's stacks = %v, want 1", got)
	}
	if got := Measure(p); got.Frames != 3*2+1 {
		t.Errorf("frames = %d, want 7", got.Frames)
	}
}
