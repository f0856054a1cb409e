package proctrack

import (
	"os"
	"testing"
)

// A process's files are opened under probee's root when it shares it,
// under /proc/PID/root otherwise: a container, or a process gone.
func TestRootOf(t *testing.T) {
	f := &fakeProc{t, t.TempDir()}
	f.process(10, f.root)
	f.process(30, t.TempDir())
	p := procFS{f.root}
	tests := []struct {
		name string
		p    procFS
		pid  int
		want string
	}{
		{"same root as probee", p, 10, f.root},
		{"container", p, 30, f.root + "/proc/30/root"},
		{"gone", p, 31, f.root + "/proc/31/root"},
		{"probee itself, real /proc", procFS{}, os.Getpid(), ""},
		{"no such process, real /proc", procFS{}, 1 << 30, "/proc/1073741824/root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.rootOf(tt.pid); got != tt.want {
				t.Errorf("rootOf(%d) = %q, want %q", tt.pid, got, tt.want)
			}
		})
	}
}
