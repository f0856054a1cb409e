package proctrack

import (
	"slices"
	"sync"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// Stacks the kernel hands over unfinished (wire.DeferredStack: the walk
// reached a file whose unwind table was not loaded yet, such as the first
// run of a binary the machine never ran while probee watched) are
// finished here, with the table built from the file, the process's
// mappings as the mapping records reported them (the process may have
// exited) and the stack copy the kernel sent, then counted
// (Kernel.AddStack). The kernel is also given the file's table (or, when
// no table can be built, an empty one: frame pointers) so that it stops
// handing over stacks of that file.

// finishDelay is how long a stack waits before it is finished: the
// mapping records of the code it ran through are handled within 60 ms
// (read every 50 ms, held 10 ms to be put in order: bpf.MmapWatcher).
const finishDelay = 100 * time.Millisecond

// maxPendingBytes bounds the stack copies waiting; past it a stack is
// counted as dropped.
const maxPendingBytes = 128 << 20

// DeferredStats says what became of the stacks the kernel handed over.
type DeferredStats struct {
	Finished uint64 // unwound to the end of the stack
	Cut      uint64 // finished but cut short (past the stack copy, a bad frame, a file without its table)
	Dropped  uint64 // not finished: too many waiting (maxPendingBytes)
}

type pending struct {
	d  wire.DeferredStack
	at time.Time
}

// finisher queues deferred stacks and finishes them on its own goroutine.
type finisher struct {
	t      *Tracker
	now    func() time.Time
	mu     sync.Mutex
	queue  []pending
	bytes  int
	closed bool
	stats  DeferredStats
	wake   chan struct{}
	done   chan struct{}
}

func newFinisher(t *Tracker) *finisher {
	f := &finisher{t: t, now: time.Now, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go f.run()
	return f
}

// add queues d (it is finished finishDelay later).
func (f *finisher) add(d wire.DeferredStack) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.bytes+len(d.Stack.Data) > maxPendingBytes {
		f.stats.Dropped++
		return
	}
	f.queue = append(f.queue, pending{d, f.now()})
	f.bytes += len(d.Stack.Data)
}

// run finishes the stacks that have waited long enough, every 20 ms, and
// all of them once flush is asked for.
func (f *finisher) run() {
	defer close(f.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			f.finishBatch(f.take(f.now().Add(-finishDelay)))
		case <-f.wake:
			f.finishBatch(f.take(time.Time{}))
			return
		}
	}
}

// take removes the stacks queued before cutoff (all of them for the zero
// time).
func (f *finisher) take(cutoff time.Time) []pending {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.queue)
	if !cutoff.IsZero() {
		n, _ = slices.BinarySearchFunc(f.queue, cutoff, func(p pending, c time.Time) int { return p.at.Compare(c) })
	}
	batch := slices.Clone(f.queue[:n])
	f.queue = slices.Delete(f.queue, 0, n)
	for _, p := range batch {
		f.bytes -= len(p.d.Stack.Data)
	}
	return batch
}

// flush finishes every queued stack and ends the goroutine: called once
// the last mapping records were handled. Later stacks are dropped.
func (f *finisher) flush() DeferredStats {
	f.mu.Lock()
	already := f.closed
	f.closed = true
	f.mu.Unlock()
	if !already {
		f.wake <- struct{}{}
	}
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// finishBatch finishes a batch; the modules of a process's image are
// resolved once for its stacks in a row. The comm does not tell every
// image apart (a shell's child runs the shell's code, then execs another
// bash), so modules that do not hold a stack's pcs are resolved again.
func (f *finisher) finishBatch(batch []pending) {
	type image struct {
		tgid int
		comm string
	}
	mods := map[image]imageModules{}
	for _, p := range batch {
		key := image{p.d.TGID, p.d.Comm}
		m, ok := mods[key]
		if !ok || !m.holds(p.d) {
			m = f.modules(p.d)
			mods[key] = m
		}
		f.finish(p.d, m)
	}
}

// imageModules are the modules of the image that ran a stack: those with
// tables (or Go's, walked by frame pointers) first, then its other
// executable mappings, walked by frame pointers as the kernel walks them:
// JIT code, and files whose table could not be built.
type imageModules struct {
	mods  []unwind.Module
	known int // mods[:known] are the first kind
}

// holds reports whether the modules hold d's pc and the frames the
// kernel unwound.
func (im imageModules) holds(d wire.DeferredStack) bool {
	in := func(pc uint64) bool {
		return slices.ContainsFunc(im.mods, func(m unwind.Module) bool { return pc >= m.Start && pc < m.End })
	}
	return in(d.Regs.RIP) && !slices.ContainsFunc(d.PCs, func(pc uint64) bool { return !in(pc) })
}

// partial reports whether frames went through a file without its table:
// the kernel counts such a stack partial too.
func (im imageModules) partial(frames []unwind.Step) bool {
	return slices.ContainsFunc(frames, func(fr unwind.Step) bool {
		return fr.Module >= im.known && im.mods[fr.Module].Inode != 0
	})
}

// modules resolves the process's executable mappings to tables and gives
// the kernel the file the walk stopped in.
func (f *finisher) modules(d wire.DeferredStack) imageModules {
	// The image that ran the stack: the process may have exec'd since,
	// or its parent, whose mappings a child has until it execs.
	pcs := append([]uint64{d.Regs.RIP}, d.PCs...)
	maps := f.t.hist.Mappings(d.TGID, d.Comm, pcs)
	if !covers(maps, d.Regs.RIP) && d.PPID != 0 {
		// A child the mapping history has not heard of (its notice came
		// after this stack).
		maps = f.t.hist.Mappings(d.PPID, d.Comm, pcs)
	}
	mods, errs := f.t.tables.modules(d.TGID, maps, f.t.proc.ancestors(d.PPID, kinDepth)...)
	f.t.tables.tableErrors(errs)
	if stuck := stuckModule(d.Regs.RIP, maps, mods); len(stuck) > 0 {
		if err := f.t.k.SetFileModules(stuck); err != nil {
			f.t.debugf("unwind tables: %v", err)
		}
	}
	return imageModules{withoutTables(mods, maps), len(mods)}
}

// withoutTables adds to mods the executable mappings none of them covers
// as modules without a table (see imageModules).
func withoutTables(mods []unwind.Module, maps []procmaps.Mapping) []unwind.Module {
	known := mods
	for _, m := range maps {
		if m.Exec() && !slices.ContainsFunc(known, func(u unwind.Module) bool { return u.Start < m.End && m.Start < u.End }) {
			mods = append(mods, unwind.Module{Start: m.Start, End: m.End, Path: m.Path, Table: &unwind.Table{}, Offset: m.Offset, Dev: m.Dev, Inode: m.Inode})
		}
	}
	return mods
}

// covers reports whether a mapping holds pc.
func covers(maps []procmaps.Mapping, pc uint64) bool {
	return slices.ContainsFunc(maps, func(m procmaps.Mapping) bool { return pc >= m.Start && pc < m.End })
}

// stuckModule is the module of the file holding pc for the kernel's file
// tables: its table, or an empty one (frame pointers) when none could be
// built, so that the kernel stops handing over that file's stacks.
func stuckModule(pc uint64, maps []procmaps.Mapping, mods []unwind.Module) []unwind.Module {
	for _, m := range mods {
		if pc >= m.Start && pc < m.End {
			return []unwind.Module{m}
		}
	}
	for _, m := range maps {
		if pc >= m.Start && pc < m.End && m.Inode != 0 {
			return []unwind.Module{{Start: m.Start, End: m.End, Path: m.Path, Table: &unwind.Table{}, Offset: m.Offset, Dev: m.Dev, Inode: m.Inode}}
		}
	}
	return nil
}

// finish unwinds the rest of d's stack and counts it.
func (f *finisher) finish(d wire.DeferredStack, im imageModules) {
	frames, stop := unwind.UnwindFrom(d.Regs, d.Exact, d.Stack, im.mods, maxStackFrames-len(d.PCs))
	user := slices.Grow(slices.Clone(d.PCs), len(frames))
	for _, fr := range frames {
		user = append(user, fr.PC)
	}
	cut := stop != unwind.StopEndOfStack || im.partial(frames)
	f.t.k.AddStack(d, user, cut)
	f.mu.Lock()
	if cut {
		f.stats.Cut++
	} else {
		f.stats.Finished++
	}
	f.mu.Unlock()
}

// maxStackFrames is the kernel's user stack depth (MAX_USTACK).
const maxStackFrames = wire.MaxUserStack
