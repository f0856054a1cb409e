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

// DeleteFunc drops the built values it is asked to, and only those: a
// failed build stays (its error is not met again), a dropped ID builds
// anew.
func TestCacheDeleteFunc(t *testing.T) {
	var c Cache[int]
	builds := 0
	get := func(id ID, v int, err error) {
		_, _ = c.Get(id, func() (int, error) { builds++; return v, err })
	}
	a, b, bad := ID{Ino: 1}, ID{Ino: 2}, ID{Ino: 3}
	get(a, 1, nil)
	get(b, 2, nil)
	get(bad, 0, errors.New("unreadable"))
	for _, c2 := range []struct {
		name string
		del  func(ID, int) bool
		n    int // dropped
		left int
	}{
		{"none", func(ID, int) bool { return false }, 0, 3},
		{"value 1", func(_ ID, v int) bool { return v == 1 }, 1, 2},
		{"all", func(ID, int) bool { return true }, 1, 1}, // the failed one stays
	} {
		if n := c.DeleteFunc(c2.del); n != c2.n || c.Len() != c2.left {
			t.Errorf("%s: dropped %d, %d left; want %d, %d", c2.name, n, c.Len(), c2.n, c2.left)
		}
	}
	builds = 0
	get(a, 1, nil)
	get(bad, 0, nil)
	if builds != 1 {
		t.Errorf("%d builds after the deletes, want 1 (the dropped ID)", builds)
	}
}
