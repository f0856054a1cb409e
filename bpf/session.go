package bpf

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
)

// Options configure a Session before load.
type Options struct {
	// FilterPIDs restricts tracing to the tgids added with AddPID and their
	// descendants (forked after AddPID).
	FilterPIDs bool
	// MaxStacks sizes each user stack map (one per depth) and each counts map, and a
	// quarter of it the kernel stack map (0: defaults, 65536 user
	// stacks/counts and 16384 kernel stacks; see the package doc).
	MaxStacks int
	// DWARF unwinds user stacks with the tables given to SetProcessModules
	// (processes without tables yet, and binaries without a table, are
	// walked with frame pointers; see DropNoTables).
	DWARF bool
	// NoTailCalls runs the DWARF walk inline (bpf_loop, or a bounded loop
	// without it) instead of through tail calls.
	NoTailCalls bool
	// SampleProbe is the probe id --sample events are counted under.
	SampleProbe uint32
	// IncludeIdle keeps samples of the idle task.
	IncludeIdle bool
	// ExcludeSelf leaves the calling process out when FilterPIDs is not
	// set (selfTGID: in the initial pid namespace only).
	ExcludeSelf bool
	// TableBudget is the most bytes the unwind tables take in kernel
	// maps (page indexes and entries; 0: DefaultTableBudget). A table
	// past it is not loaded: its binary is unwound with frame pointers.
	TableBudget uint64
	// NoFindVMA turns off finding tables through bpf_find_vma and the
	// file's identity (the per-process mapping arrays alone, as on kernels
	// before 5.17): for tests and comparisons.
	NoFindVMA bool
	// Measure makes function probes measure time or an argument instead
	// of counting hits (latency.go).
	Measure Measure
	// NoDefer counts a stack whose walk reaches a file without a loaded
	// table as partial (frame pointers from there) instead of handing it
	// to user space to finish (Deferred): for tests and comparisons.
	NoDefer bool
	// Compat runs the fallbacks of older kernels (compat.go).
	Compat Compat
	// OffCPU times the waits of traced threads (offcpu.go).
	OffCPU OffCPU
}

// Session is a loaded set of probee programs and maps plus their links.
type Session struct {
	objs      probeeMaps
	opts      Options
	mu        sync.Mutex
	links     []link.Link
	procs     []link.Link // fork/exit tracking
	perfFDs   []int       // sampling events
	tmu       sync.Mutex  // guards tables and files
	tables    tableStore
	files     map[probeeFileKey]probeeFileTable // what file_tables holds (filetables.go)
	gostacks  goStacks                          // what go_stacks holds (gostacks.go)
	closed    []closedWait                      // off-CPU waits open at the end (offcpu.go)
	keys      map[probeeFileKey]probeeFileKey   // file identity shown in maps -> the unwinder's (filekey.go)
	findVMA   bool                              // the kernel finds tables by file (have_find_vma)
	coll      *ebpf.Collection                  // the loaded objects s.objs does not hold
	progs     programs                          // programs loaded after the session opened (programs.go)
	watch     *watchdog                         // resumes the holds if probee dies (watchdog.go); nil: none
	handedOff bool                              // the watchdog holds links (HandOff)

	gate     *countsGate        // which counts map events go to (interval.go)
	dmu      sync.Mutex         // serializes drains; guards the fields below
	active   uint32             // the counts map events go to
	switched bool               // the other map awaits its drain
	addedAt  [addedKinds]uint64 // countsGate.added at the last switch (DrainDue)
	acc      accumulator        // counts and stacks drained so far
	stats    DrainStats
	// Buffers of drainCounts.
	batchKeys []probeeCountKey
	batchVals []uint64
}

// MaxProbes is the number of probe ids a session can count.
const MaxProbes = int(probeeLimitMAX_PROBES)

// ErrPermission means the caller lacks the capabilities to load BPF.
var ErrPermission = errors.New("needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN) to load BPF programs: run probee as root or with sudo")

// Open loads the programs and maps into the kernel.
func Open(opts Options) (*Session, error) {
	if err := rlimit.RemoveMemlock(); err != nil && os.Geteuid() != 0 {
		return nil, ErrPermission
	}
	if opts.Compat.Legacy || !haveCallbacks() {
		opts.Compat.Legacy = true
		opts.NoFindVMA = true // the legacy object has no bpf_find_vma
	}
	spec, err := loadSpec(opts.Compat)
	if err != nil {
		return nil, fmt.Errorf("load bpf object spec: %w", err)
	}
	if err := configure(spec, opts); err != nil {
		return nil, err
	}
	s := &Session{opts: opts, acc: newAccumulator(), files: map[probeeFileKey]probeeFileTable{},
		keys: map[probeeFileKey]probeeFileKey{}}
	s.findVMA = opts.DWARF && HaveFindVMA() && !opts.NoFindVMA
	s.tables = newTableStore(spec, tableBudget(opts))
	if err := s.load(spec); err != nil {
		return nil, err
	}
	s.tables.outer = s.objs.UnwindShards
	if opts.DWARF { // the first shards, in one batch (shards.go)
		if err := s.tables.growTo(shardSpares); err != nil {
			s.Close()
			return nil, err
		}
	}
	if s.gate, err = openCountsGate(s.objs.CountsGate); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.attachProcessTracking(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.attachLatencyExit(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// load loads spec's maps and small programs into s.objs, and keeps what
// loading the others needs (programs.go).
func (s *Session) load(spec *ebpf.CollectionSpec) error {
	types := btf.NewCache()
	coll, err := ebpf.NewCollectionWithOptions(eagerSpec(spec), ebpf.CollectionOptions{Cache: types})
	if err != nil {
		return loadError(err)
	}
	s.progs.init(spec, coll, s.opts.DWARF && !s.opts.NoTailCalls, types)
	if err := coll.Assign(&s.objs); err != nil {
		s.progs.close()
		coll.Close()
		return fmt.Errorf("load bpf objects: %w", err)
	}
	s.coll = coll // what the objects do not own (the globals' maps)
	return nil
}

func configure(spec *ebpf.CollectionSpec, opts Options) error {
	if opts.FilterPIDs {
		if err := spec.Variables["filter_pids"].Set(uint32(1)); err != nil {
			return fmt.Errorf("set filter_pids: %w", err)
		}
	}
	vars := compatVars(opts.Compat)
	maps.Copy(vars, map[string]uint32{"unwind_mode": 0, "use_tail_calls": 1, "have_bpf_loop": 1,
		"sample_probe": opts.SampleProbe, "include_idle": 0, "self_tgid": 0, "have_find_vma": 0, "defer_stacks": 0})
	if HaveFindVMA() && !opts.NoFindVMA {
		vars["have_find_vma"] = 1
		// Measured stacks are kept at the entry until the return: a stack
		// handed to user space to finish would lose its measure.
		if opts.DWARF && !opts.NoDefer && opts.Measure.Mode == MeasureCount {
			vars["defer_stacks"] = 1
		}
	}
	if opts.DWARF {
		vars["unwind_mode"] = uint32(probeeUnwindStrategyUNWIND_DWARF)
	}
	if opts.NoTailCalls {
		vars["use_tail_calls"] = 0
	}
	if !HaveBPFLoop() || opts.Compat.Legacy {
		vars["have_bpf_loop"] = 0
	}
	if opts.IncludeIdle {
		vars["include_idle"] = 1
	}
	if opts.ExcludeSelf && !opts.FilterPIDs {
		vars["self_tgid"] = selfTGID()
	}
	for name, v := range vars {
		if err := spec.Variables[name].Set(v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	if err := configureMeasure(spec, opts.Measure); err != nil {
		return err
	}
	if err := configureOffCPU(spec, opts.OffCPU); err != nil {
		return err
	}
	if b := tableBudget(opts); b > MaxTableBudget {
		return fmt.Errorf("unwind table budget of %s is past the %s the table storage addresses", byteSize(b), byteSize(MaxTableBudget))
	}
	spec.Maps["unwind_shards"].MaxEntries = shardSlots(tableBudget(opts))
	sizeStackMaps(spec, opts.MaxStacks, !haveLazyPerfMaps() || opts.Compat.Prealloc)
	return nil
}

// sizeStackMaps sizes the maps --max-stacks drives for n stacks (0: the
// defaults), every hash map preallocated when prealloc is set.
func sizeStackMaps(spec *ebpf.CollectionSpec, n int, prealloc bool) {
	if prealloc {
		preallocate(spec)
		if n == 0 {
			n = PreallocMaxStacks
		}
	}
	if n > 0 {
		spec.Maps["counts0"].MaxEntries = uint32(n)
		spec.Maps["counts1"].MaxEntries = uint32(n)
		spec.Maps["measures0"].MaxEntries = uint32(n)
		spec.Maps["measures1"].MaxEntries = uint32(n)
		spec.Maps["kstacks"].MaxEntries = uint32(max(n/4, 1))
	}
	sizeUstacks(spec, n, prealloc)
}

// tableBudget is opts' table budget, the default for 0.
func tableBudget(opts Options) uint64 { return TableBudget(opts.TableBudget) }

// TableBudget is the table budget a run with --unwind-budget b has (the
// default for 0).
func TableBudget(b uint64) uint64 {
	if b == 0 {
		return DefaultTableBudget
	}
	return b
}

var haveLoop = sync.OnceValue(func() bool {
	return features.HaveProgramHelper(ebpf.Kprobe, asm.FnLoop) == nil
})

var haveFindVMA = sync.OnceValue(func() bool {
	return features.HaveProgramHelper(ebpf.Kprobe, asm.FnFindVma) == nil
})

// HaveFindVMA reports whether the kernel has bpf_find_vma (5.17+), with
// which a pc's unwind table is found from the mapped file's identity
// (file tables) instead of a per-process mapping array.
func HaveFindVMA() bool { return haveFindVMA() }

// HaveBPFLoop reports whether the kernel has bpf_loop (5.17+), which lets
// the inline DWARF path walk MaxUserStack frames.
func HaveBPFLoop() bool { return haveLoop() }

// Depths of the DWARF walk (frames).
const (
	MaxUserStack     = int(probeeLimitMAX_USTACK)
	StepFrames       = int(probeeWalkDepthSTEP_FRAMES) // frames per tail-called step program
	MaxTailCalls     = int(probeeWalkDepthMAX_TAIL_CALLS)
	InlineLoopFrames = int(probeeWalkDepthINLINE_FRAMES) // the inline path without bpf_loop
)

// InlineDepth is how deep the inline (no tail call) DWARF path walks here.
func InlineDepth() int {
	if HaveBPFLoop() {
		return MaxUserStack
	}
	return InlineLoopFrames
}

func loadError(err error) error {
	if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		return ErrPermission
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("the kernel's verifier rejected probee's BPF program (please report this with the log): %+v", ve)
	}
	return fmt.Errorf("load bpf programs: %w", err)
}

func (s *Session) attachProcessTracking() error {
	for _, h := range []struct{ tp, prog string }{
		{"sched_process_fork", "probee_fork"}, {"sched_process_exec", "probee_exec"}, {"sched_process_exit", "probee_exit"},
		{"sched_process_free", "probee_free"},
	} {
		l, err := s.attachTracing(h.prog)
		if err != nil {
			for _, l := range s.procs {
				l.Close()
			}
			s.procs = nil
			return fmt.Errorf("attach %s (tp_btf): %w", h.tp, err)
		}
		s.procs = append(s.procs, l)
	}
	return nil
}

// attachTracing attaches the tracing (tp_btf) program named prog.
func (s *Session) attachTracing(prog string) (link.Link, error) {
	p, err := s.program(prog)
	if err != nil {
		return nil, err
	}
	return link.AttachTracing(link.TracingOptions{Program: p})
}

// AddPID adds a tgid to the in-kernel filter (with Options.FilterPIDs).
func (s *Session) AddPID(pid int) error {
	if err := s.objs.Pids.Put(uint32(pid), uint8(probeePidFlagPID_TRACED)); err != nil {
		return fmt.Errorf("add pid %d to the filter: %w", pid, err)
	}
	return nil
}

// RemovePID takes a tgid out of the in-kernel filter (the kernel takes
// every traced process out itself when it exits).
func (s *Session) RemovePID(pid int) error {
	if err := s.objs.Pids.Delete(uint32(pid)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("remove pid %d from the filter: %w", pid, err)
	}
	return nil
}

// Detach closes every probe link (process tracking stays until Close). It is
// safe to call more than once.
func (s *Session) Detach() error {
	s.closeSampling()
	s.mu.Lock()
	links := s.links
	s.links = nil
	s.mu.Unlock()
	return closeLinks(links)
}

// detachers is how many links closeLinks closes at once.
const detachers = 64

// closeLinks closes links, many at once: closing a per-function uprobe
// link waits for the kernel's grace periods (~0.13 s each on 6.18), and
// links closed together share them (74 links: 9.6 s one by one).
func closeLinks(links []link.Link) error {
	errs := make([]error, len(links))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(detachers, len(links)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = links[i].Close()
			}
		}()
	}
	for i := range links {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// Close detaches everything, resumes the processes a gate stopped whose
// notice was not handled, stops the watchdog, and unloads programs and
// maps.
func (s *Session) Close() error {
	errs := []error{s.Detach()}
	for _, l := range s.procs {
		errs = append(errs, l.Close())
	}
	s.procs = nil
	if _, err := resumeHolds(s.objs.Holds); err != nil {
		errs = append(errs, fmt.Errorf("resume the processes the gates stopped: %w", err))
	}
	switch {
	case s.watch == nil:
	case s.handedOff:
		s.watch.leave()
	default:
		s.watch.stop()
	}
	s.watch = nil
	s.gate.close()
	s.tmu.Lock()
	s.tables.close()
	s.tmu.Unlock()
	s.progs.close()
	errs = append(errs, s.objs.Close())
	if s.coll != nil {
		s.coll.Close()
	}
	return errors.Join(errs...)
}

func (s *Session) addLink(l link.Link) {
	s.mu.Lock()
	s.links = append(s.links, l)
	s.mu.Unlock()
}
