package output

import (
	"slices"
	"testing"
)

// Equal frames intern to one pointer; frames differing in any field do not.
func TestInternerIntern(t *testing.T) {
	var fs Interner
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

// Stacks of the same interned frames are one Stack; stacks differing in a
// frame or its place are not; an empty stack is the zero Stack.
func TestInternerStack(t *testing.T) {
	var fs Interner
	a, b := fs.Intern(Frame{Name: "a"}), fs.Intern(Frame{Name: "b"})
	buf := []*Frame{a, b}
	s := fs.Stack(buf)
	buf[0] = b // the caller's buffer is reused: the stack must not change
	if got := s.Frames(); !slices.Equal(got, []*Frame{a, b}) || s.Len() != 2 || s.Leaf() != b {
		t.Fatalf("stack = %v, want a copy of [a b]", got)
	}
	if again := fs.Stack([]*Frame{a, b}); again != s {
		t.Errorf("equal stacks interned apart")
	}
	for _, other := range [][]*Frame{{b, a}, {a}, {a, b, b}} {
		if fs.Stack(other) == s {
			t.Errorf("%v interned as [a b]", other)
		}
	}
	if fs.Stack(nil) != (Stack{}) || fs.Stack([]*Frame{}) != (Stack{}) || !StackOf().Empty() {
		t.Errorf("an empty stack is not the zero Stack")
	}
	if StackOf(a, b) == s || !slices.Equal(StackOf(a, b).Frames(), s.Frames()) {
		t.Errorf("StackOf: a stack of its own with the same frames")
	}
}
