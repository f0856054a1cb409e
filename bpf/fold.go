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
// (which symbolizes and merges them) and drops the stacks no count
// references any more, so the accumulator holds the processes that run.
//
// A stack may be dropped only if no count can still name it. Counts in Go
// are looked at; counts still in the kernel's maps are not, but each of
// them was counted either after the last take (its stack is then in a
// kernel stack map: an event whose stack was moved to Go stores it again)
// or between the last switch and the last take (its stack was moved by
// that take). So a stack is dropped only when no count in Go names it and
// the last take did not move it (its stamp is older).

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
// goneGrace, and returns them (sorted, with their stacks); the stacks no
// count names any more are freed. Drained snapshots (and so --push, which
// sends their differences) never see those counts again, nor Drain.
func (s *Session) TakeGone(alive func(tgid int) bool, now time.Time) []Count {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	ready := s.acc.goneReady(alive, now)
	if len(ready) == 0 {
		return nil
	}
	taken := s.takeCountsOf(ready)
	// A prune looks at every count and stack: it waits until the counts
	// taken since the last are an eighth of those left (a long-lived
	// process with 2M counts beside children that exit would otherwise
	// hold the drain lock for that look every second).
	s.acc.untaken += len(taken)
	if s.acc.untaken*8 >= len(s.acc.counts)+len(s.acc.measures) {
		s.acc.pruneStacks()
		s.acc.compactPCs()
		s.acc.untaken = 0
	}
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
	comms := map[[16]int8]string{}
	for k, n := range s.acc.counts {
		if tgids[k.tgid] {
			out = append(out, s.countOf(k, measureVal{calls: n}, comms))
			delete(s.acc.counts, k)
		}
	}
	for k, m := range s.acc.measures {
		if tgids[k.tgid] {
			out = append(out, s.countOf(k, m, comms))
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

// pruneStacks frees the stacks that no count in Go names and the last
// take did not move (see above).
func (a *accumulator) pruneStacks() {
	users, kernels := map[uint64]bool{}, map[uint64]bool{}
	for k := range a.counts {
		users[k.ustack], kernels[k.kstack] = true, true
	}
	for k := range a.measures {
		users[k.ustack], kernels[k.kstack] = true, true
	}
	for h, u := range a.ustacks {
		if u.take < a.take && !users[h] {
			delete(a.ustacks, h)
		}
	}
	for h, k := range a.kstacks {
		if k.take < a.take && !kernels[h] {
			delete(a.kstacks, h)
		}
	}
}

// minCompact is the number of nodes below which the pcs tree is not
// compacted.
const minCompact = 1 << 16

// compactPCs rebuilds the pcs tree from the stacks left once it holds
// twice the nodes it held after its last compaction: a pruned stack
// leaves its nodes behind. Counts handed out before keep the old tree.
func (a *accumulator) compactPCs() {
	if a.pcs.Len() < 2*a.compact+minCompact {
		return
	}
	t := prefixtree.New[uint64]()
	var buf []uint64
	move := func(n prefixtree.Node) prefixtree.Node {
		buf = a.pcs.AppendReversed(buf[:0], n)
		return t.AddReversed(buf)
	}
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

// MaxStacks is the size of the counts maps: --max-stacks, or its default.
func (s *Session) MaxStacks() int { return int(s.objs.Counts0.MaxEntries()) }
