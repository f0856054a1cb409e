package output

// Merged merges samples the way the outputs show them, without their
// process: samples of one probe, container and comm with the same stacks
// (interned by one Frames) become one, their counts and values summed,
// with PID 0 (pprof then gives them no pid label). Samples without a comm
// keep their pid, which names them ("[pid N]"). A long run hands it the
// samples of processes that exited (memory then grows with the distinct
// stacks, not with the processes: ~350 new processes a second
// system-wide); collapsed stacks and flamegraphs read the same. Max
// bounds the distinct samples: a machine that keeps running new code (a
// build farm) keeps making new stacks. The zero value (no bound) is ready
// to use; not safe for concurrent use.
type Merged struct {
	Max     int // most distinct samples kept; 0: no bound
	idx     map[sampleID]int
	samples []Sample
}

// Add merges s into the samples and reports whether it did: a sample
// that would be the Max+1st distinct one is left out.
func (m *Merged) Add(s Sample) bool {
	if s.Comm != "" {
		s.PID = 0
	}
	id := idOfSample(&s)
	if i, ok := m.idx[id]; ok {
		m.samples[i].Count += s.Count
		m.samples[i].Value += s.Value
		return true
	}
	if m.Full() {
		return false
	}
	if m.idx == nil {
		m.idx = map[sampleID]int{}
	}
	m.idx[id] = len(m.samples)
	m.samples = append(m.samples, s)
	return true
}

// Full reports whether a sample not merged yet would be left out.
func (m *Merged) Full() bool { return m.Max > 0 && len(m.samples) >= m.Max }

// Samples are the merged samples, in the order they were first added.
// The slice is Merged's: append to a copy.
func (m *Merged) Samples() []Sample { return m.samples }
