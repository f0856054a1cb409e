package bpf

import (
	"slices"
	"time"

	"github.com/probee/probee/internal/prefixtree"
)

// Long runs on a machine that starts processes all the time would keep
// every process's counts and stacks here until the end: a 10-minute
// system-wide run with 350 new processes a second grew by ~25 MB a minute.
// TakeGone hands the counts of processes gone for a while to the caller
// (which symbolizes and merges them), so the accumulator holds the
// processes that run. Their stacks' nodes stay in the pcs tree until it
// is compacted (compactPCs); the hashes of stacks go by age anyway
// (accumulator.go).

// goneAt is when a process was first found gone: the take then, and the
// time.
type goneAt struct {
	take uint32
	at   time.Time
}

// goneTakes is how many takes must follow the one when a process was
// found gone before its counts are handed over: both counts maps have
// then been drained since, so its events are all in Go. goneGrace is how
// long it must have been gone (a stack finished in user space, proctrack's
// deferred stacks, can arrive a little after its process exited).
const (
	goneTakes = 2
	goneGrace = 10 * time.Second
)

// TakeGone removes from the counts drained so far those of the processes
// alive reports gone, once they have been gone for goneTakes drains and
// goneGrace, and returns them (sorted, with their stacks). Drained snapshots (and so --push, which
// sends their differences) never see those counts again, nor Drain.
func (s *Session) TakeGone(alive func(tgid int) bool, now time.Time) []Count {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	ready := s.acc.goneReady(alive, now)
	if len(ready) == 0 {
		return nil
	}
	taken := s.takeCountsOf(ready)
	s.acc.compactPCs()
	return taken
}

// goneReady notes the processes with counts here that alive reports gone
// and returns those gone long enough. It looks at processes, not counts:
// it runs under the drain lock every second, and 2M counts of one
// process took long enough to hold up the drains that keep the kernel
// maps from filling.
func (a *accumulator) goneReady(alive func(tgid int) bool, now time.Time) map[uint32]bool {
	ready := map[uint32]bool{}
	for tgid := range a.procs {
		g, ok := a.gone[tgid]
		switch {
		case !ok:
			if !alive(int(tgid)) {
				a.gone[tgid] = goneAt{a.take, now}
			}
		case a.take >= g.take+goneTakes && now.Sub(g.at) >= goneGrace:
			ready[tgid] = true
		}
	}
	return ready
}

// takeCountsOf moves the counts of the processes in tgids out of the
// accumulator, as sorted Counts. Call with s.dmu held.
func (s *Session) takeCountsOf(tgids map[uint32]bool) []Count {
	var out []Count
	for k, n := range s.acc.counts {
		if tgids[k.tgid] {
			out = append(out, s.acc.countOf(k, measureVal{calls: n}))
			delete(s.acc.counts, k)
		}
	}
	for k, m := range s.acc.measures {
		if tgids[k.tgid] {
			out = append(out, s.acc.countOf(k, m))
			delete(s.acc.measures, k)
		}
	}
	for tgid := range tgids {
		delete(s.acc.gone, tgid)
		delete(s.acc.procs, tgid)
	}
	slices.SortFunc(out, func(a, b Count) int { return compareCounts(&a, &b) })
	return out
}

// minCompact is the number of nodes below which the pcs tree is not
// compacted.
const minCompact = 1 << 16

// compactPCs rebuilds the pcs tree from the stacks that counts and
// recent hashes name, once it holds twice the nodes it held after its
// last compaction: the stacks of counts handed over leave their nodes
// behind. Counts handed out before keep the old tree. The check is one
// comparison, the rebuild one walk of every stack left.
func (a *accumulator) compactPCs() {
	if a.pcs.Len() < 2*a.compact+minCompact {
		return
	}
	t := prefixtree.New[uint64]()
	moved := map[prefixtree.Node]prefixtree.Node{prefixtree.Root: prefixtree.Root}
	var buf []uint64
	move := func(n prefixtree.Node) prefixtree.Node {
		m, ok := moved[n]
		if !ok {
			buf = a.pcs.AppendReversed(buf[:0], n)
			m = t.AddReversed(buf)
			moved[n] = m
		}
		return m
	}
	a.counts = remapKeys(a.counts, move)
	a.measures = remapKeys(a.measures, move)
	for h, u := range a.ustacks {
		u.node = move(u.node)
		a.ustacks[h] = u
	}
	for h, k := range a.kstacks {
		k.node = move(k.node)
		a.kstacks[h] = k
	}
	a.pcs, a.compact = t, t.Len()
}

// remapKeys is m with its keys' stacks moved.
func remapKeys[V any](m map[countKey]V, move func(prefixtree.Node) prefixtree.Node) map[countKey]V {
	out := make(map[countKey]V, len(m))
	for k, v := range m {
		k.user, k.kernel = move(k.user), move(k.kernel)
		out[k] = v
	}
	return out
}

// MaxStacks is the size of the counts maps: --max-stacks, or its default.
func (s *Session) MaxStacks() int { return int(s.objs.Counts0.MaxEntries()) }
