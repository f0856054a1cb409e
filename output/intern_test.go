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
