package output

import (
	"github.com/probee/probee/internal/container"
	"github.com/probee/probee/internal/prefixtree"
)

// Merged merges samples the way the outputs show them, without their
// process: samples of one probe, container and comm with the same stacks
// (interned by one Interner) become one, their counts and values summed,
// with PID 0 (pprof then gives them no pid label). Samples without a comm
// keep their pid, which names them ("[pid N]"). A long run hands it the
// samples of processes that exited (memory then grows with the distinct
// stacks, not with the processes: ~350 new processes a second
// system-wide); collapsed stacks and flamegraphs read the same. Max
// bounds the distinct samples: a machine that keeps running new code (a
// build farm) keeps making new stacks. The zero value (no bound) is ready
// to use; not safe for concurrent use.
//
// A merged sample is held in 32 bytes and its index entry (a Sample is
// 120, a sampleID 104): what its samples share but their stacks (probe,
// comm, container, the stacks' trees) is one group of a few, and the
// stacks are their nodes. 100K distinct samples held 305 bytes each as
// Samples indexed by sampleID, 69 now (BenchmarkMergedAdd).
type Merged struct {
	Max    int // most distinct samples kept; 0: no bound
	groups []mergeGroup
	byGrp  map[mergeGroup]uint32
	idx    map[mergeKey]int // -> counts
	counts []mergedCount    // in the order first added

	spilled int // distinct samples moved to a Spill (Full counts them)
}

// mergeGroup is what the samples of one group share but their stacks:
// sampleID without the stacks' nodes. A run has few groups.
type mergeGroup struct {
	probe, comm  string
	pid          int
	container    container.Info
	user, kernel *prefixtree.Tree[*Frame]
}

// mergeKey identifies a merged sample: its group and its stacks' nodes.
type mergeKey struct {
	group        uint32
	user, kernel prefixtree.Node
}

// mergedCount is one merged sample.
type mergedCount struct {
	key          mergeKey
	count, value uint64
}

// Add merges s into the samples and reports whether it did: a sample
// that would be the Max+1st distinct one is left out.
func (m *Merged) Add(s Sample) bool {
	if s.Comm != "" {
		s.PID = 0
	}
	k := mergeKey{m.group(&s), s.User.n, s.Kernel.n}
	if i, ok := m.idx[k]; ok {
		m.counts[i].count += s.Count
		m.counts[i].value += s.Value
		return true
	}
	if m.Full() {
		return false
	}
	if m.idx == nil {
		m.idx = map[mergeKey]int{}
	}
	m.idx[k] = len(m.counts)
	m.counts = append(m.counts, mergedCount{k, s.Count, s.Value})
	return true
}

// group is the number of s's group (pid already cleared for a sample with
// a comm).
func (m *Merged) group(s *Sample) uint32 {
	g := mergeGroup{probe: s.Probe, comm: s.Comm, pid: s.PID, container: s.Container, user: s.User.t, kernel: s.Kernel.t}
	id, ok := m.byGrp[g]
	if !ok {
		if m.byGrp == nil {
			m.byGrp = map[mergeGroup]uint32{}
		}
		id = uint32(len(m.groups))
		m.groups = append(m.groups, g)
		m.byGrp[g] = id
	}
	return id
}

// Full reports whether a sample not merged yet would be left out. The
// samples moved to a Spill count (some of them may be merged again).
func (m *Merged) Full() bool { return m.Max > 0 && len(m.counts)+m.spilled >= m.Max }

// reset empties m once its samples are in a Spill holding spilled of
// them: nothing references its groups' trees any more.
func (m *Merged) reset(spilled int) {
	*m = Merged{Max: m.Max, spilled: spilled}
}

// Len is the number of merged samples.
func (m *Merged) Len() int { return len(m.counts) }

// Samples are the merged samples, in the order they were first added, in
// a new slice.
func (m *Merged) Samples() []Sample {
	out := make([]Sample, len(m.counts))
	for i, c := range m.counts {
		g := &m.groups[c.key.group]
		out[i] = Sample{Probe: g.probe, PID: g.pid, Comm: g.comm, Container: g.container,
			User: Stack{g.user, c.key.user}, Kernel: Stack{g.kernel, c.key.kernel},
			Count: c.count, Value: c.value}
	}
	return out
}
