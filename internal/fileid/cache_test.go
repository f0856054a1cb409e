package fileid

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// Concurrent Gets of one ID build once and share the value; an error is
// shared like a value; other IDs build their own.
func TestCache(t *testing.T) {
	var c Cache[int]
	var builds atomic.Int32
	build := func() (int, error) { builds.Add(1); return 42, nil }
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.Get(ID{BuildID: "ab"}, build); v != 42 || err != nil {
				t.Errorf("Get = %d, %v", v, err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for one ID", n)
	}
	bad := errors.New("unreadable")
	for range 2 {
		if _, err := c.Get(ID{Ino: 7}, func() (int, error) { builds.Add(1); return 0, bad }); err != bad {
			t.Errorf("error %v, want %v", err, bad)
		}
	}
	if n, l := builds.Load(), c.Len(); n != 2 || l != 2 {
		t.Errorf("%d builds, %d IDs held; want 2 and 2", n, l)
	}
}
