package trace

import (
	"testing"

	"github.com/probee/probee/output"
)

// Merged without its pid, a bare address (a pc in no mapping known,
// different in every process) is named "[unknown]": one frame for all of
// them, where each used to make a frame and stack of its own. Frames in
// a known file keep their address in the file; the processes counted to
// the end keep their bare addresses.
func TestUserFramePidless(t *testing.T) {
	bare := output.Frame{Address: 0x7f0012345678}
	inFile := output.Frame{Module: "/usr/lib/libc.so.6", Offset: 0x1234, Address: 0x1234}
	for _, tc := range []struct {
		name    string
		pidless bool
		f       output.Frame
		want    string
		addr    uint64
	}{
		{"merged bare", true, bare, "[unknown]", 0},
		{"merged in a file", true, inFile, "libc.so.6+0x1234", 0x1234},
		{"to the end bare", false, bare, "0x7f0012345678", 0x7f0012345678},
	} {
		sf := stackFrames{pidless: tc.pidless}
		f := sf.userFrame(tc.f)
		if got := output.FrameName(f, false, false); got != tc.want || f.Address != tc.addr {
			t.Errorf("%s: %q address %#x, want %q %#x", tc.name, got, f.Address, tc.want, tc.addr)
		}
	}
}
