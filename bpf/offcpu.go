package bpf

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"time"

	"github.com/cilium/ebpf"
	"github.com/probee/probee/internal/monotime"
)

// Off-CPU time (offcpu.h): the sched_switch program parks each traced
// thread's stacks at its switch-out in offcpu_starts and adds the time to
// them when the thread runs again, as a measure (calls: the waits, total:
// their nanoseconds) under probe id OffCPU.Probe + its state. Two things
// are left to Go: a parked wait names its stacks by hash, and a wait can
// outlast the hashes the accumulator keeps (keepHashes), so the drains
// keep those of the waits still open (pinOpenWaits); and the waits still
// open when tracing ends are closed then (closeOpenWaits).

// OffCPU configures --off-cpu.
type OffCPU struct {
	On bool
	// Probe is the first of OffCPUStates probe ids: a wait is counted
	// under Probe + its state (OffCPUStateNames).
	Probe uint32
	// MinBlock and MaxBlock bound the waits that get a stack (0: none);
	// every wait is in its probe's histogram.
	MinBlock, MaxBlock time.Duration
	// Wakers joins the stacks of the thread that woke a wait to it
	// (wakers.go).
	Wakers bool
	// Threads is how many threads can have waits timed, each keeping its
	// entry from its first wait to its exit (0: DefaultOffCPUThreads);
	// the waits of more are dropped (DropOffCPUFull).
	Threads int
}

// OffCPUStates is the number of states a thread leaves the CPU in.
const OffCPUStates = int(probeeOffcpuStateOFFCPU_STATES)

// OffCPUStateNames are the states' frames, by enum offcpu_state.
var OffCPUStateNames = [OffCPUStates]string{"[sleep]", "[uninterruptible]", "[preempted]", "[stopped]"}

// DefaultOffCPUThreads sizes offcpu_starts.
const DefaultOffCPUThreads = 65536

func configureOffCPU(spec *ebpf.CollectionSpec, o OffCPU) error {
	if !o.On {
		return nil
	}
	if o.MinBlock < 0 || o.MaxBlock < 0 || (o.MaxBlock > 0 && o.MaxBlock < o.MinBlock) {
		return fmt.Errorf("off-CPU wait bounds %v to %v: want 0 <= min <= max", o.MinBlock, o.MaxBlock)
	}
	lo, hi := o.bounds()
	vars := map[string]any{"offcpu_probe": o.Probe, "min_block": lo, "max_block": hi}
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	spec.Maps["offcpu_starts"].MaxEntries = uint32(cmp.Or(max(o.Threads, 0), DefaultOffCPUThreads))
	pm := spec.Maps["probe_measures"]
	pm.MaxEntries = max(pm.MaxEntries, o.Probe+uint32(OffCPUStates))
	configureWakers(spec, o)
	return nil
}

// bounds are the waits that get a stack, from lo to hi ns (min_block,
// max_block).
func (o OffCPU) bounds() (lo, hi uint64) {
	hi = ^uint64(0)
	if o.MaxBlock > 0 {
		hi = uint64(o.MaxBlock)
	}
	return uint64(o.MinBlock), hi
}

// AttachOffCPU attaches the sched_switch program (Options.OffCPU), and
// with Wakers the sched_waking one.
func (s *Session) AttachOffCPU() error {
	if !s.opts.OffCPU.On {
		return errors.New("off-CPU time was not configured (Options.OffCPU)")
	}
	l, err := s.attachTracing("probee_offcpu")
	if err != nil {
		return fmt.Errorf("attach sched_switch for --off-cpu (tp_btf): %w", err)
	}
	s.addLink(l)
	if s.opts.OffCPU.Wakers {
		return s.attachWakers()
	}
	return nil
}

// forgetWait drops the open wait of thread tid: a gate's stop, which
// Continue ends (a wait of probee's, not of the program).
func (s *Session) forgetWait(tid int) {
	if s.opts.OffCPU.On {
		_ = s.objs.OffcpuStarts.Delete(uint32(tid))
	}
}

// openWaits calls f with each wait still open.
func (s *Session) openWaits(f func(k probeeCountKey, start uint64)) {
	if !s.opts.OffCPU.On {
		return
	}
	var tid uint32
	var v probeeOffcpuStart
	it := s.objs.OffcpuStarts.Iterate()
	for it.Next(&tid, &v) {
		if v.Start != 0 { // else the thread's entry between waits (offcpu.h)
			f(v.Key, v.Start)
		}
	}
}

// pinOpenWaits keeps the hashes of the open waits' stacks for the drains
// that resolve them once the waits end. A wait woken since the last take
// names a join not taken yet (wakers.go) in place of its kernel stack,
// which the last pins kept: they are kept too. Call with dmu held.
func (s *Session) pinOpenWaits() {
	pins, joined := map[uint64]bool{}, false
	s.openWaits(func(k probeeCountKey, _ uint64) {
		pins[k.Ustack], pins[k.Kstack] = true, true
		_, ok := s.acc.kstacks[k.Kstack]
		joined = joined || (!ok && k.Kstack != 0)
	})
	if joined {
		maps.Copy(pins, s.acc.pinned)
	}
	s.acc.pinned = pins
}

// closeOpenWaits ends the waits still open now, tracing having stopped:
// as the kernel would have, in their probes' histograms (added to
// s.closed) and, within the bounds, in their stacks' measures. Call with
// dmu held, before the last take of stacks.
func (s *Session) closeOpenWaits() {
	now := monotime.Now()
	if now == 0 {
		return
	}
	lo, hi := s.opts.OffCPU.bounds()
	s.openWaits(func(k probeeCountKey, start uint64) {
		d := now - min(start, now)
		s.closed = append(s.closed, closedWait{k.Probe, d})
		if d >= lo && d <= hi { // as offcpu_resume
			s.acc.pending = append(s.acc.pending, pendingCount{rawKeyOf(k), measureVal{1, d, d}, true})
		}
	})
}

// closedWait is a wait closed by closeOpenWaits: its probe and time.
type closedWait struct {
	probe uint32
	d     uint64
}

// addClosed adds the waits closeOpenWaits closed to their probes' sums
// and histograms.
func (s *Session) addClosed(out []ProbeMeasure) {
	for _, w := range s.closed {
		if int(w.probe) >= len(out) {
			continue
		}
		p := &out[w.probe]
		p.Calls++
		p.Total += w.d
		p.Max = max(p.Max, w.d)
		b := min(bits.Len64(w.d>>1), HistBuckets-1) // log2_bucket
		p.Hist[b]++
		p.HistSum[b] += w.d
	}
}
