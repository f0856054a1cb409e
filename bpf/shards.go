package bpf

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
)

// The table storage's shards (unwind_shards, an array of maps) are
// created as tables need them. Adding a map to an array of maps waits for
// an RCU grace period (the kernel's maybe_wait_bpf_programs), 10-16 ms
// here for each update: a loader adding shards one at a time paid it for
// every 256 KiB of tables, and meanwhile the kernel handed the stacks of
// the files still waiting to user space (a system-wide start, where every
// binary is new, filled the deferred ring). So shards are added in
// batches: all those a table needs, plus shardSpares more, in one
// BPF_MAP_UPDATE_BATCH (one wait since Linux 6.8; older kernels wait per
// element), and shardSpares of them when a session with tables opens,
// before any probe is attached.
const shardSpares = 4 // 1 MiB

// shardSlots is the number of shards a budget needs (unwind_shards' size).
func shardSlots(budget uint64) uint32 {
	return uint32(max((budget+ShardBytes-1)/ShardBytes, 1))
}

// grow creates, if the shards created so far end before element end, the
// shards up to end and shardSpares more, within the budget.
func (ts *tableStore) grow(end uint64) error {
	need := uint32((end + shardU32s - 1) >> shardShift)
	if need <= ts.nshards {
		return nil
	}
	return ts.growTo(need + shardSpares)
}

// growTo creates shards until there are n (at most the budget's), and
// adds them to the storage in one batch.
func (ts *tableStore) growTo(n uint32) error {
	n = min(n, shardSlots(ts.budget))
	var fds []uint32
	var made []*ebpf.Map // shard ts.nshards+i is made[i]
	for i := ts.nshards; i < n; i++ {
		m, err := ebpf.NewMap(ts.shardSpec)
		if err != nil {
			closeAll(made)
			return fmt.Errorf("create table storage shard %d: %w", i, err)
		}
		made = append(made, m)
		fds = append(fds, uint32(m.FD()))
	}
	if err := putRange(ts.outer, ts.nshards, fds); err != nil {
		closeAll(made)
		return fmt.Errorf("add table storage shards %d-%d: %w", ts.nshards, n-1, err)
	}
	for _, m := range made {
		ts.open[ts.nshards] = m
		ts.nshards++
	}
	return nil
}

func closeAll(ms []*ebpf.Map) {
	for _, m := range ms {
		m.Close()
	}
}

// write puts vals at elements off.. of the storage, shard by shard.
func (ts *tableStore) write(off uint64, vals []uint32) error {
	for len(vals) > 0 {
		m, done, err := ts.shard(uint32(off >> shardShift))
		if err != nil {
			return err
		}
		in := uint32(off & (shardU32s - 1))
		n := min(uint64(len(vals)), uint64(shardU32s-in))
		err = writeShard(m, in, vals[:n])
		done()
		if err != nil {
			return err
		}
		vals, off = vals[n:], off+n
	}
	return nil
}

// writeShard writes vals at element off of shard m, through its memory
// mapping: the elements lie in order there (unwind_maps.h).
func writeShard(m *ebpf.Map, off uint32, vals []uint32) error {
	mem, err := m.Memory()
	if err != nil {
		return fmt.Errorf("map table storage shard: %w", err)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*4)
	if _, err := mem.WriteAt(b, int64(off)*4); err != nil {
		return fmt.Errorf("write table storage: %w", err)
	}
	return nil
}

// shard returns shard i, created by grow, for writing, and what to call
// once written. The shards the storage's end has not passed are held
// open (pass); a table placed where released ones lay is written
// through the storage's own reference to its shard, taken for the write.
func (ts *tableStore) shard(i uint32) (*ebpf.Map, func(), error) {
	if m, ok := ts.open[i]; ok {
		return m, func() {}, nil
	}
	if i >= ts.nshards {
		return nil, nil, fmt.Errorf("table storage shard %d is not created (%d created)", i, ts.nshards)
	}
	var m *ebpf.Map
	if err := ts.outer.Lookup(i, &m); err != nil {
		return nil, nil, fmt.Errorf("table storage shard %d: %w", i, err)
	}
	return m, func() { m.Close() }, nil
}

// pass releases the shards wholly before the storage's end (the storage
// holds them): tables are appended past them.
func (ts *tableStore) pass() {
	for j, o := range ts.open {
		if uint64(j) < shardOf(ts.next) {
			o.Close()
			delete(ts.open, j)
		}
	}
}

// close releases the shards still open (the storage holds them all).
func (ts *tableStore) close() {
	for i, m := range ts.open {
		m.Close()
		delete(ts.open, i)
	}
}
