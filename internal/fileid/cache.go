package fileid

import (
	"sync"
	"sync/atomic"
)

// Cache holds one value per ID: the first Get of an ID builds it, later
// and concurrent Gets of that ID wait for that build and share its result,
// error included. The zero Cache is empty and ready; it is safe for
// concurrent use. Each package keeps its own Cache for its own kind of
// value (resolver's objects, unwind's tables).
type Cache[T any] struct {
	mu sync.Mutex
	m  map[ID]*entry[T]
}

type entry[T any] struct {
	once sync.Once
	done atomic.Bool // the build returned: v and err are set
	v    T
	err  error
}

// Get returns the value for id, calling build when id is new.
func (c *Cache[T]) Get(id ID, build func() (T, error)) (T, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[ID]*entry[T]{}
	}
	e := c.m[id]
	if e == nil {
		e = &entry[T]{}
		c.m[id] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.v, e.err = build()
		e.done.Store(true)
	})
	return e.v, e.err
}

// Len is the number of IDs held.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// DeleteFunc drops the entries whose value was built without error and
// for which del reports true (a build still running is left alone), and
// returns how many it dropped. A later Get of a dropped ID builds anew;
// entries that failed are kept, so their error is not met (and reported)
// again.
func (c *Cache[T]) DeleteFunc(del func(id ID, v T) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for id, e := range c.m {
		if !e.done.Load() || e.err != nil || !del(id, e.v) {
			continue
		}
		delete(c.m, id)
		n++
	}
	return n
}
