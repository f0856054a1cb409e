package bpf

import (
	"context"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The gate's memory is the map's value: a switch is seen by the kernel, and
// the drain of an idle map returns at once.
func TestCountsGate(t *testing.T) {
	s := openSession(t, Options{})
	for i := 0; i < 4; i++ {
		start := time.Now()
		if err := s.DrainInterval(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("drain %d of idle maps took %v", i, d)
		}
		raw := make([]byte, gateSize)
		if err := s.objs.CountsGate.Lookup(uint32(0), &raw); err != nil {
			t.Fatal(err)
		}
		if got := binary.LittleEndian.Uint32(raw); got != s.active {
			t.Errorf("drain %d: kernel sees counts map %d, session %d", i, got, s.active)
		}
	}
	if st := s.DrainStats(); st.Drains != 4 || st.Deferred != 0 {
		t.Errorf("stats %+v, want 4 drains", st)
	}
}

// An event still counting in the old map defers its drain: the map is not
// drained, and the next call does not switch back.
func TestDrainDeferred(t *testing.T) {
	s := openSession(t, Options{})
	defer func(d time.Duration) { drainWait = d }(drainWait)
	drainWait = 20 * time.Millisecond
	inFlight := s.gate.word64(gateSlotsOff + 5*gateSlotSize + 0*8) // slot 5, counts0
	*inFlight = 1
	for i := 0; i < 2; i++ {
		if err := s.DrainInterval(); err != nil {
			t.Fatal(err)
		}
		if st := s.DrainStats(); s.active != 1 || st.Deferred != i+1 || st.Drains != 0 {
			t.Fatalf("call %d with counts0 busy: active %d, stats %+v; want active 1, deferred", i, s.active, st)
		}
	}
	*inFlight = 0
	if err := s.DrainInterval(); err != nil {
		t.Fatal(err)
	}
	if st := s.DrainStats(); s.active != 1 || st.Drains != 1 {
		t.Fatalf("counts0 idle: active %d, stats %+v; want active 1, 1 drain", s.active, st)
	}
	if err := s.DrainInterval(); err != nil || s.active != 0 {
		t.Fatalf("next drain: active %d, %v; want a switch to counts0", s.active, err)
	}
}

// Drains every millisecond while two threads hit a probe: every call is
// counted exactly once, and Drained, between drains, holds exactly what
// the drains moved so far (it only grows).
func TestDrainUnderLoad(t *testing.T) {
	testgate.Root(t)
	bin := testgate.PrivateFixture(t, filepath.Join(fixtures, "load-fp"))
	s := openSession(t, Options{})
	st, err := s.AttachUprobes(context.Background(), 3, []UprobeTarget{{Path: bin, Offset: fileOffset(t, bin, "hit"), Entry: true, Name: "hit"}}, 0, false)
	if err != nil || st.Attached != 1 {
		t.Fatalf("attach: %+v %v", st, err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var drained uint64
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
				if err := s.DrainInterval(); err != nil {
					t.Error(err)
					return
				}
				if !checkDrained(t, s, &drained) {
					return
				}
			}
		}
	})
	const calls = 2 * 200000
	err = exec.Command(bin, "200000", "2").Run()
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	s.Detach()
	snap, err := s.Drain(4)
	if err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, c := range snap.Counts {
		total += c.Count
	}
	ds := s.DrainStats()
	t.Logf("calls %d, counts %d, drops %v, drains %+v", calls, total, snap.Drops, ds)
	if total+snap.Drops[DropCountsSwitch] != calls || snap.Hits[3] != calls {
		t.Errorf("counted %d + %d lost, hits %d, want %d", total, snap.Drops[DropCountsSwitch], snap.Hits[3], calls)
	}
	if ds.Drains < 10 || ds.Moved == 0 {
		t.Errorf("drains %+v: want periodic drains that moved counts", ds)
	}
}

// checkDrained checks that Drained's counts sum to the events the drains
// moved, and are no fewer than at the last call (*last).
func checkDrained(t *testing.T, s *Session, last *uint64) bool {
	snap, err := s.Drained(4)
	if err != nil {
		t.Error(err)
		return false
	}
	var sum uint64
	for _, c := range snap.Counts {
		sum += c.Count
	}
	if moved := s.DrainStats().Moved; sum != moved || sum < *last {
		t.Errorf("Drained: %d counted, drains moved %d, %d at the last call", sum, moved, *last)
		return false
	}
	*last = sum
	return true
}

// A drain is due once the keys added to a map since the last drain began
// fill half of it, whichever map: counts (64 here), user stacks (64 of
// each depth class), kernel stacks (16). The programs' counts live in the
// gate's slots.
func TestDrainDue(t *testing.T) {
	s := openSession(t, Options{MaxStacks: 64})
	add := func(kind, slot int, n uint64) {
		*s.gate.word64(gateSlotsOff + slot*gateSlotSize + gateAddedOff + kind*8) += n
	}
	steps := []struct {
		kind, slot int
		n          uint64
		drain      bool // DrainInterval before asking
		want       bool
	}{
		{addedCounts, 0, 31, false, false},
		{addedCounts, 5, 1, false, true}, // 32 of 64, over two slots
		{addedCounts, 0, 0, true, false}, // drained: counted from there
		{addedCounts, 1, 31, false, false},
		{addedUstacks, 2, 32, false, true},
		{addedKstacks, 0, 0, true, false},
		{addedKstacks, 63, 8, false, true}, // 8 of 16
		// Each depth class of user stacks has its map: 62 keys in two
		// maps of 64 fill neither half.
		{addedUstacks + 2, 3, 31, true, false},
		{addedUstacks + 1, 4, 31, false, false},
		{addedUstacks + 2, 7, 1, false, true},
	}
	for i, st := range steps {
		if st.drain {
			if err := s.DrainInterval(); err != nil {
				t.Fatal(err)
			}
		}
		add(st.kind, st.slot, st.n)
		if got := s.DrainDue(); got != st.want {
			t.Errorf("step %d (%+v): DrainDue %v, want %v", i, st, got, st.want)
		}
	}
}
