package fileid

import "sync"

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
	e.once.Do(func() { e.v, e.err = build() })
	return e.v, e.err
}

// Len is the number of IDs held.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
