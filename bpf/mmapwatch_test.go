package bpf

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-1": 2, "0-3,5,7-8": 7} {
		got, err := parseCPUList(in)
		if err != nil || len(got) != want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %d cpus", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "1-y"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q): want error", bad)
		}
	}
}

// A process that exits at once still has its executable mappings recorded.
func TestWatchMmapsShortLived(t *testing.T) {
	testgate.Root(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-fp")))
	var mu sync.Mutex
	byPID := map[int][]MmapEvent{}
	w, err := WatchMmaps(func(ev MmapEvent) {
		mu.Lock()
		byPID[ev.PID] = append(byPID[ev.PID], ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "1")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	evs := byPID[cmd.Process.Pid]
	var exe, libc, execEv bool
	for _, ev := range evs {
		exe = exe || ev.Path == bin
		libc = libc || filepath.Base(ev.Path) == "libc.so.6"
		execEv = execEv || ev.Exec
	}
	if !exe || !libc || !execEv {
		t.Errorf("pid %d: exe %v libc %v exec %v; events %+v", cmd.Process.Pid, exe, libc, execEv, evs)
	}
}
