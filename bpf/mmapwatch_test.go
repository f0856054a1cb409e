package bpf

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/testgate"
	"golang.org/x/sys/unix"
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
	byPID := map[int][]wire.MmapEvent{}
	w, err := WatchMmaps(MmapHandlers{Ordered: func(ev wire.MmapEvent) {
		mu.Lock()
		byPID[ev.PID] = append(byPID[ev.PID], ev)
		mu.Unlock()
	}})
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
	if len(evs) == 0 || !evs[0].Fork || evs[0].PPID != os.Getpid() {
		t.Errorf("pid %d: first record %+v, want its fork from %d", cmd.Process.Pid, evs[:min(1, len(evs))], os.Getpid())
	}
}

// After Kick, the records made so far are read without waiting for the
// tick (an hour here), and reach Early.
func TestKickEarly(t *testing.T) {
	testgate.Root(t)
	bin, _ := filepath.Abs(testgate.Fixture(t, filepath.Join(fixtures, "chain-fp")))
	early := make(chan struct{}, 1)
	bin = filepath.Clean(bin)
	seen := func(ev wire.MmapEvent) {
		if ev.Path == bin {
			select {
			case early <- struct{}{}:
			default:
			}
		}
	}
	w, err := watchMmaps(MmapHandlers{Early: seen, Ordered: func(wire.MmapEvent) {}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := exec.Command(bin, "1").Run(); err != nil {
		t.Fatal(err)
	}
	w.Kick()
	select {
	case <-early:
	case <-time.After(10 * time.Second):
		t.Fatalf("no record of %s 10 s after Kick", bin)
	}
}

// A fork record of a new process is a fork record; a new thread's is not.
func TestRecordFork(t *testing.T) {
	rec := func(pid, ppid, tid, ptid uint32) []byte {
		var b []byte
		for _, v := range []uint32{pid, ppid, tid, ptid} {
			b = binary.NativeEndian.AppendUint32(b, v)
		}
		b = binary.NativeEndian.AppendUint64(b, 41)    // time
		return binary.NativeEndian.AppendUint64(b, 42) // sample_id: time
	}
	var w MmapWatcher
	if ev, ok := w.record(unix.PERF_RECORD_FORK, 0, rec(8, 7, 8, 7)); !ok || ev != (wire.MmapEvent{Time: 42, PID: 8, Fork: true, PPID: 7}) {
		t.Errorf("process fork: %+v, %v; want pid 8 forked from 7 at 42", ev, ok)
	}
	if ev, ok := w.record(unix.PERF_RECORD_FORK, 0, rec(7, 7, 9, 7)); ok {
		t.Errorf("new thread: %+v, want no record", ev)
	}
}

// Records are handled in time order once older than the cutoff; younger
// ones wait for the next read, unless all are asked for.
func TestOrderRecords(t *testing.T) {
	batch := func() []wire.MmapEvent {
		return []wire.MmapEvent{{Time: 30, PID: 3}, {Time: 10, PID: 1}, {Time: 50, PID: 5}, {Time: 20, PID: 2}}
	}
	pids := func(evs []wire.MmapEvent) []int {
		var out []int
		for _, ev := range evs {
			out = append(out, ev.PID)
		}
		return out
	}
	ready, held := orderRecords(batch(), 30, false)
	if !slices.Equal(pids(ready), []int{1, 2, 3}) || !slices.Equal(pids(held), []int{5}) {
		t.Errorf("cutoff 30: ready %v held %v, want [1 2 3] [5]", pids(ready), pids(held))
	}
	ready, held = orderRecords(batch(), 0, true)
	if !slices.Equal(pids(ready), []int{1, 2, 3, 5}) || len(held) != 0 {
		t.Errorf("all: ready %v held %v, want [1 2 3 5] []", pids(ready), pids(held))
	}
}

// An exec's COMM record (PERF_RECORD_MISC_COMM_EXEC, the process's main
// thread) is an exec record carrying the new comm; a rename (prctl) or a
// thread's exec record is not.
func TestRecordComm(t *testing.T) {
	rec := func(pid, tid uint32, comm string) []byte {
		b := binary.NativeEndian.AppendUint32(nil, pid)
		b = binary.NativeEndian.AppendUint32(b, tid)
		name := make([]byte, (len(comm)+8)&^7) // NUL-padded to 8 bytes
		copy(name, comm)
		return binary.NativeEndian.AppendUint64(append(b, name...), 42) // sample_id: time
	}
	var w MmapWatcher
	tests := []struct {
		name     string
		misc     uint16
		pid, tid uint32
		exec     bool
	}{
		{"exec", unix.PERF_RECORD_MISC_COMM_EXEC, 7, 7, true},
		{"rename", 0, 7, 7, false},
		{"thread", unix.PERF_RECORD_MISC_COMM_EXEC, 7, 8, false},
	}
	for _, tt := range tests {
		ev, ok := w.record(unix.PERF_RECORD_COMM, tt.misc, rec(tt.pid, tt.tid, "true"))
		if ok != tt.exec {
			t.Errorf("%s: exec record %v, want %v", tt.name, ok, tt.exec)
		}
		if ok && (ev.PID != 7 || !ev.Exec || ev.Comm != "true" || ev.Time != 42) {
			t.Errorf("%s: %+v, want pid 7, exec, comm true, time 42", tt.name, ev)
		}
	}
}
