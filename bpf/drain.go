package bpf

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf"
)

// DropCause is why an event or part of it was lost (mirrors probee.h).
type DropCause int

// Drop causes.
const (
	DropCountsFull DropCause = iota
	DropUserStackFull
	DropUserStackCollision
	DropKernelStackError
	DropKernelStackCollision
	DropEventLost
	DropNoTables  // DWARF: stack taken before the process's tables were loaded
	DropUnknownPC // DWARF: stack cut at a pc in no known mapping
	dropMax
)

var dropNames = [...]string{
	"counts map full (raise --max-stacks)",
	"user stack map full (raise --max-stacks)",
	"user stack hash collision",
	"kernel stack unreadable",
	"kernel stack map collision (raise --max-stacks)",
	"process notice lost (ring buffer full)",
	"partial stacks: taken before the process's unwind tables were loaded (frame pointers used)",
	"partial stacks: cut at a pc outside every known mapping (JIT code, or a library loaded since)",
}

func (d DropCause) String() string {
	if d >= 0 && d < dropMax {
		return dropNames[d]
	}
	return fmt.Sprintf("drop cause %d", int(d))
}

// Count is one aggregated stack: how often probe fired in tgid with this
// user and kernel stack. Pcs are leaf first, as captured.
type Count struct {
	Probe         uint32
	TGID          int
	Comm          string
	User          []uint64 // leaf first; nil when lost (see UserLost)
	UserTruncated bool
	UserLost      bool
	Kernel        []uint64 // leaf first
	Count         uint64
}

// Snapshot is everything drained from the kernel.
type Snapshot struct {
	Counts []Count
	Hits   []uint64 // events per probe id (before any loss)
	Drops  map[DropCause]uint64
}

// Drain reads the aggregation maps for probes 0..nprobes-1.
func (s *Session) Drain(nprobes int) (*Snapshot, error) {
	snap := &Snapshot{Drops: map[DropCause]uint64{}}
	var err error
	if snap.Hits, err = s.perCPUSums(s.objs.Hits, nprobes); err != nil {
		return nil, fmt.Errorf("read hits: %w", err)
	}
	drops, err := s.perCPUSums(s.objs.Drops, int(dropMax))
	if err != nil {
		return nil, fmt.Errorf("read drops: %w", err)
	}
	for i, v := range drops {
		if v > 0 {
			snap.Drops[DropCause(i)] = v
		}
	}
	if snap.Counts, err = s.readCounts(); err != nil {
		return nil, err
	}
	return snap, nil
}

func (s *Session) perCPUSums(m *ebpf.Map, n int) ([]uint64, error) {
	out := make([]uint64, n)
	var per []uint64
	for i := 0; i < n; i++ {
		if err := m.Lookup(uint32(i), &per); err != nil {
			return nil, err
		}
		for _, v := range per {
			out[i] += v
		}
	}
	return out, nil
}

func (s *Session) readCounts() ([]Count, error) {
	var (
		key   probeeCountKey
		val   uint64
		out   []Count
		kerns = map[int32][]uint64{}
	)
	it := s.objs.Counts.Iterate()
	for it.Next(&key, &val) {
		c := Count{Probe: key.Probe, TGID: int(key.Tgid), Comm: commString(key.Comm), Count: val}
		s.fillUser(&c, key.Ustack)
		c.Kernel = s.kernelStack(key.Kstack, kerns)
		out = append(out, c)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read counts: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return lessCount(&out[i], &out[j]) })
	return out, nil
}

func (s *Session) fillUser(c *Count, id uint64) {
	var st probeeUserStack
	if id == 0 || s.objs.Ustacks.Lookup(id, &st) != nil {
		c.UserLost = true
		return
	}
	n := min(int(st.Len), len(st.Pcs))
	c.User = append([]uint64(nil), st.Pcs[:n]...)
	c.UserTruncated = st.Flags&1 != 0
}

func (s *Session) kernelStack(id int32, cache map[int32][]uint64) []uint64 {
	if id < 0 {
		return nil
	}
	if pcs, ok := cache[id]; ok {
		return pcs
	}
	var raw [127]uint64
	if s.objs.Kstacks.Lookup(uint32(id), &raw) != nil {
		return nil
	}
	var pcs []uint64
	for _, pc := range raw {
		if pc == 0 {
			break
		}
		pcs = append(pcs, pc)
	}
	cache[id] = pcs
	return pcs
}

func commString(c [16]int8) string {
	b := make([]byte, 0, 16)
	for _, ch := range c {
		if ch == 0 {
			break
		}
		b = append(b, byte(ch))
	}
	return string(b)
}

func lessCount(a, b *Count) bool {
	if a.Probe != b.Probe {
		return a.Probe < b.Probe
	}
	if a.TGID != b.TGID {
		return a.TGID < b.TGID
	}
	return a.Count > b.Count
}
