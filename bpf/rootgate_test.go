package bpf

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/testgate"
)

// The root gate stops a traced process at an exec under another root
// (chroot DIR /gofx), once, and not at execs under probee's root (chroot
// itself, a program of probee's root): each stop is a gate notice, and
// Continue resumes it.
func TestRootGate(t *testing.T) {
	gofx, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "gofx")))
	s := openSession(t, Options{FilterPIDs: true})
	if err := s.AttachRootGate(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var stops []int
	stop, err := s.Events(func(ev wire.ProcessEvent) {
		if ev.Type != wire.EventGate {
			return
		}
		mu.Lock()
		stops = append(stops, ev.TGID)
		mu.Unlock()
		s.Continue(ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	root := t.TempDir()
	copyFile(t, gofx, filepath.Join(root, "gofx"))
	for _, tc := range []struct {
		name  string
		argv  []string
		stops int
	}{
		{"another root", []string{"chroot", root, "/gofx"}, 1},
		{"probee's root", []string{gofx}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			stops = nil
			mu.Unlock()
			// sh waits until it is in the filter, then execs.
			cmd := exec.Command("sh", append([]string{"-c", `read x; exec "$@"`, "sh"}, tc.argv...)...)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if err := s.AddPID(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			in.Write([]byte("go\n"))
			// A stopped process ends only once the handler has noted
			// its stop and resumed it.
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%q: %v", tc.argv, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(stops) != tc.stops || tc.stops > 0 && stops[0] != cmd.Process.Pid {
				t.Errorf("gate stops %v, want %d of pid %d", stops, tc.stops, cmd.Process.Pid)
			}
		})
	}
}
