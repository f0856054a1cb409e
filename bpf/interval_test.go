package bpf

import (
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// The grace-period barrier returns, and quickly when nothing runs.
func TestRCUBarrier(t *testing.T) {
	testgate.Root(t)
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 5; i++ {
		start := time.Now()
		if err := s.DrainInterval(); err != nil {
			t.Fatal(err)
		}
		t.Logf("drain %d: %v (active counts map %d)", i, time.Since(start), s.active)
	}
}
