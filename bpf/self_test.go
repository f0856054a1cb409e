package bpf

import (
	"os"
	"testing"
	"time"
)

// A system-wide session with ExcludeSelf counts no sample of the process
// that opened it, however busy; without it, that process's samples are
// there.
func TestExcludeSelf(t *testing.T) {
	if selfTGID() == 0 {
		t.Skip("not in the initial pid namespace: nothing is left out")
	}
	for _, exclude := range []bool{false, true} {
		s := openSession(t, Options{ExcludeSelf: exclude})
		if err := s.AttachSampling(999); err != nil {
			t.Fatal(err)
		}
		spin(300 * time.Millisecond)
		s.Detach()
		snap, err := s.Drain(1)
		if err != nil {
			t.Fatal(err)
		}
		own := uint64(0)
		for _, c := range snap.Counts {
			if c.TGID == os.Getpid() {
				own += c.Count
			}
		}
		t.Logf("ExcludeSelf %v: %d of %d samples our own", exclude, own, snap.Hits[0])
		if exclude != (own == 0) {
			t.Errorf("ExcludeSelf %v: %d samples of this process", exclude, own)
		}
		s.Close()
	}
}

// spin keeps a CPU busy in this process for d.
func spin(d time.Duration) {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n++
	}
	_ = n
}
