package bpf

import (
	"errors"
	"fmt"
	"time"

	"github.com/cilium/ebpf"
)

// "How much" (latency.h): in a measure mode the function probes count
// calls, a total and a maximum per stack in measures0/1 (drained like
// the counts, through the same gate) and a log2 histogram per probe in
// probe_measures.

// MeasureMode says what function probes (uprobes, kprobes) count.
type MeasureMode uint32

// Measure modes (enum measure_kind in probee.h).
const (
	MeasureCount   = MeasureMode(probeeMeasureKindMEASURE_COUNT)   // hits per stack (the default)
	MeasureLatency = MeasureMode(probeeMeasureKindMEASURE_LATENCY) // time from entry to return per entry stack
	MeasureWeight  = MeasureMode(probeeMeasureKindMEASURE_WEIGHT)  // the sum of an integer argument per stack
)

// Measure configures a measure mode.
type Measure struct {
	Mode MeasureMode
	// WeightArg is the argument MeasureWeight sums (0-5: rdi, rsi, rdx,
	// rcx, r8, r9; for Go functions rax, rbx, rcx, rdi, rsi, r8).
	WeightArg int
	// MinLatency: MeasureLatency calls shorter than it are in the
	// histograms only, not in the stacks (funcslower).
	MinLatency time.Duration
	// Probes is the number of probe ids (the histograms' size).
	Probes int
}

// Depth of the per-thread stacks of calls in flight (LAT_DEPTH).
const LatencyDepth = int(probeeLimitLAT_DEPTH)

// HistBuckets is the number of log2 buckets (HIST_BUCKETS): bucket i
// holds the values in [2^i, 2^(i+1)), bucket 0 also 0.
const HistBuckets = int(probeeLimitHIST_BUCKETS)

// ProbeMeasure is what one probe's calls added up to, every call included
// (MinLatency only filters the stacks), and what happened to the calls
// that were not timed.
type ProbeMeasure struct {
	Calls, Total, Max uint64
	Hist              [HistBuckets]uint64 // calls per log2 bucket
	HistSum           [HistBuckets]uint64 // the sum of their values per bucket
	Unwound           uint64              // never returned: left by longjmp, an exception or a panic
	Exited            uint64              // the thread exited with the call in flight
	Unmatched         uint64              // returns without their entry (e.g. the call began before tracing)
	TooDeep           uint64              // entered with LatencyDepth calls in flight: not timed
	NoRoom            uint64              // no room for the thread's calls in flight: not timed
	InFlight          uint64              // not returned when tracing stopped (running, or left by a panic nothing noticed)
}

func configureMeasure(spec *ebpf.CollectionSpec, m Measure) error {
	if m.Mode > MeasureWeight {
		return fmt.Errorf("measure mode %d unknown", m.Mode)
	}
	if m.Mode == MeasureWeight && (m.WeightArg < 0 || m.WeightArg > 5) {
		return fmt.Errorf("weight argument %d: want 0-5", m.WeightArg)
	}
	vars := map[string]any{"measure_mode": uint32(m.Mode), "weight_arg": uint32(m.WeightArg),
		"min_latency": uint64(max(m.MinLatency, 0))}
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	if m.Mode != MeasureCount {
		spec.Maps["probe_measures"].MaxEntries = uint32(max(m.Probes, 1))
	}
	return nil
}

// attachLatencyExit attaches the thread exit hook that ends the calls in
// flight of exiting threads.
func (s *Session) attachLatencyExit() error {
	if s.opts.Measure.Mode != MeasureLatency {
		return nil
	}
	l, err := s.attachTracing("probee_lat_exit")
	if err != nil {
		return fmt.Errorf("attach sched_process_exit for --latency (tp_btf): %w", err)
	}
	s.procs = append(s.procs, l)
	return nil
}

// measureVal is one stack's measure in the accumulator.
type measureVal struct{ calls, total, max uint64 }

func (s *Session) measuresMap(i uint32) *ebpf.Map {
	if i == 0 {
		return s.objs.Measures0
	}
	return s.objs.Measures1
}

// drainMeasures moves every measure of m into the accumulator, like
// drainCounts.
func (s *Session) drainMeasures(m *ebpf.Map) (moved uint64, err error) {
	keys := make([]probeeCountKey, drainBatch)
	vals := make([]probeeMeasure, drainBatch)
	var cursor ebpf.MapBatchCursor
	for {
		n, err := m.BatchLookupAndDelete(&cursor, keys, vals, nil)
		for i, key := range keys[:n] {
			w := vals[i]
			s.acc.pending = append(s.acc.pending, pendingCount{rawKeyOf(key), measureVal{w.Calls, w.Total, w.Max}, true})
			moved += w.Calls
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return moved, nil
		}
		if err != nil {
			return moved, fmt.Errorf("drain measures: %w", err)
		}
	}
}

// probeMeasures reads the per-probe sums and histograms of probes
// 0..n-1, and counts the calls still in flight.
func (s *Session) probeMeasures(n int) ([]ProbeMeasure, error) {
	if s.opts.Measure.Mode == MeasureCount && !s.opts.OffCPU.On {
		return nil, nil
	}
	out := make([]ProbeMeasure, n)
	var per []probeeProbeMeasure
	for i := range out {
		if i >= int(s.objs.ProbeMeasures.MaxEntries()) {
			break
		}
		if err := s.objs.ProbeMeasures.Lookup(uint32(i), &per); err != nil {
			return nil, fmt.Errorf("read probe measures: %w", err)
		}
		for _, c := range per {
			out[i].add(c)
		}
	}
	s.addClosed(out)
	return out, s.countInFlight(out)
}

func (p *ProbeMeasure) add(c probeeProbeMeasure) {
	p.Calls += c.Calls
	p.Total += c.Total
	p.Max = max(p.Max, c.Max)
	for i := range c.Hist {
		p.Hist[i] += c.Hist[i]
		p.HistSum[i] += c.Hsum[i]
	}
	p.Unwound += c.Stats[probeeLatUntimedLAT_UNWOUND]
	p.Exited += c.Stats[probeeLatUntimedLAT_EXITED]
	p.Unmatched += c.Stats[probeeLatUntimedLAT_UNMATCHED]
	p.TooDeep += c.Stats[probeeLatUntimedLAT_TOO_DEEP]
	p.NoRoom += c.Stats[probeeLatUntimedLAT_NO_ROOM]
}

// countInFlight adds the calls still on some thread's stack to out.
func (s *Session) countInFlight(out []ProbeMeasure) error {
	var key probeeLatKey
	var st probeeLatStack
	it := s.objs.LatStacks.Iterate()
	for it.Next(&key, &st) {
		for _, f := range st.F[:min(int(st.Depth), len(st.F))] {
			if int(f.Probe) < len(out) {
				out[f.Probe].InFlight++
			}
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read the calls in flight: %w", err)
	}
	return nil
}
