package output

import "testing"

// Equal frames intern to one pointer; frames differing in any field do not.
func TestFramesIntern(t *testing.T) {
	var fs Frames
	a := Frame{Name: "f", Module: "/bin/x", Address: 0x10}
	p := fs.Intern(a)
	if q := fs.Intern(a); q != p {
		t.Errorf("equal frames interned apart")
	}
	for _, other := range []Frame{
		{Name: "f", Module: "/bin/x", Address: 0x11},
		{Name: "f", Module: "/bin/x", Address: 0x10, Inline: true},
		{Name: "f", Module: "/bin/x", Address: 0x10, Line: 3},
	} {
		if fs.Intern(other) == p {
			t.Errorf("%+v interned as %+v", other, a)
		}
	}
	if *p != a || fs.Len() != 4 {
		t.Errorf("interned %+v, %d frames; want %+v, 4", *p, fs.Len(), a)
	}
}

// Stacks of the same interned frames share one slice; stacks differing in
// a frame or its place do not; an empty stack is nil.
func TestFramesStack(t *testing.T) {
	var fs Frames
	a, b := fs.Intern(Frame{Name: "a"}), fs.Intern(Frame{Name: "b"})
	buf := []*Frame{a, b}
	s := fs.Stack(buf)
	buf[0] = b // the caller's buffer is reused: the stack must not change
	if s[0] != a || s[1] != b {
		t.Fatalf("stack = %v, want a copy of [a b]", s)
	}
	if again := fs.Stack([]*Frame{a, b}); idOf(again) != idOf(s) {
		t.Errorf("equal stacks interned apart")
	}
	for _, other := range [][]*Frame{{b, a}, {a}, {a, b, b}} {
		if idOf(fs.Stack(other)) == idOf(s) {
			t.Errorf("%v interned as [a b]", other)
		}
	}
	if fs.Stack(nil) != nil || fs.Stack([]*Frame{}) != nil {
		t.Errorf("an empty stack is not nil")
	}
}

// A stack whose key another stack holds moves on to the next key, and is
// found there again.
func TestFramesStackKeyTaken(t *testing.T) {
	var fs Frames
	a := []*Frame{fs.Intern(Frame{Name: "a"})}
	b := []*Frame{fs.Intern(Frame{Name: "b"})}
	fs.stacks = map[uint64][]*Frame{stackKey(b): a}
	got := fs.Stack(b)
	if len(got) != 1 || got[0] != b[0] {
		t.Fatalf("Stack(b) = %v, want b's frames", got)
	}
	if again := fs.Stack(b); &again[0] != &got[0] {
		t.Error("Stack(b) made a second copy")
	}
}
