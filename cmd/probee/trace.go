package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/proctrack"
	"github.com/probee/probee/resolver"
	"github.com/probee/probee/symbolize"
	"github.com/probee/probee/unwind"
	"github.com/probee/probee/unwind/diskcache"
	"golang.org/x/sys/unix"
)

const maxProbes = bpf.MaxProbes

// tracer is one tracing run: resolved probes, the kernel session, the
// traced command or pid, the process tracker and the symbolizer it feeds.
type tracer struct {
	cfg         *config
	status      *statusWriter
	cmd         *tracedCommand
	target      *proctrack.Target // -p, held by a pidfd
	sess        *bpf.Session
	res         *resolver.Resolver
	sym         *symbolize.Symbolizer
	targets     [][]resolver.Target // per probe id
	stopEv      func()
	stopDef     func() // the deferred stack reader
	mmaps       *bpf.MmapWatcher
	earlyDrains atomic.Int64 // drains started because a kernel map was half full (interval.go)
	procs       *proctrack.Tracker
	deferred    proctrack.DeferredStats // what became of the stacks the kernel handed over
	tables      *unwind.Cache           // builds or loads the unwind tables (--unwind dwarf, auto)
	tableDir    *diskcache.Dir          // the on-disk table cache; nil: none
	push        *pushState              // --push; nil: none
	dests       *output.Dests           // -o, fixed before tracing starts
	folded      *foldState              // processes gone during the run (fold.go); nil with PROBEE_MERGE_GONE=0 or --push
}

func trace(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	dests, err := checkTraceable(cfg)
	if err != nil {
		return err
	}
	defer dests.Close()
	t := &tracer{cfg: cfg, dests: dests, status: newStatus(stderr, cfg.quiet)}
	if cfg.pid != 0 {
		tg, err := openTarget(cfg.pid)
		if err != nil {
			return err
		}
		t.target = tg
		defer tg.Close()
	}
	scope := resolver.Scope{PID: cfg.pid, Command: cfg.command}
	t.res = resolver.New(scope)
	t.sym = symbolize.New(symbolize.Config{Objects: t.res.Index()})
	if err := t.resolveAll(); err != nil {
		return err
	}
	if err := t.open(); err != nil { // before the command starts: fail early
		return err
	}
	defer t.close()
	if len(cfg.command) > 0 {
		tc, err := startPaused(cfg.command)
		if err != nil {
			return err
		}
		t.cmd = tc
		defer func() {
			if tc.held {
				tc.abort()
			}
		}()
	}
	if err := t.track(); err != nil {
		return err
	}
	err = t.attachAll(ctx)
	tightenGC()
	if err != nil {
		if ctx.Err() == nil {
			return err
		}
		// Ctrl-C or SIGTERM while attaching: nothing ran; the deferred
		// abort kills a command held at its exec.
		t.status.infof("interrupted while attaching the probes: %s; writing outputs", t.notStarted())
		if n, err := t.sess.HandOff(); err != nil {
			t.status.warnf("detach: %v", err)
		} else {
			t.status.debugf("%d links left to the watchdog to detach", n)
		}
		return t.finish(stdout)
	}
	if err := t.startPush(); err != nil {
		return err
	}
	// Processes gone for a while are merged without their pid and
	// forgotten (fold.go), so that a long run holds the processes that
	// run, not every one that ever hit a probe. PROBEE_MERGE_GONE=0
	// (hidden) keeps them all to the end, for tests/bench/53-churn.sh to
	// compare. Not with --push, whose deltas need every count to stay in
	// the session.
	if t.push == nil && os.Getenv("PROBEE_MERGE_GONE") != "0" {
		t.folded = newFoldState(t.sym, t.sess.MaxStacks())
	}
	exited := t.wait(ctx)
	err = t.finish(stdout)
	t.stopCommand()
	if err == nil && exited && t.cmd != nil && t.cmd.exitCode() > 0 {
		return &commandExit{t.cmd.exitCode()}
	}
	return err
}

// notStarted says what an interrupted attach left untraced.
func (t *tracer) notStarted() string {
	if t.cmd != nil {
		return "the command was not started"
	}
	return "nothing was traced"
}

// commandGrace is how long a command still running when tracing ends gets
// to exit before SIGTERM, and after it before SIGKILL.
const commandGrace = time.Second

// stopCommand ends the traced command if tracing stopped before it exited,
// once the outputs are written.
func (t *tracer) stopCommand() {
	if t.cmd == nil || t.cmd.held || !t.cmd.running() {
		return
	}
	if sig := t.cmd.stop(commandGrace); sig != 0 {
		t.status.infof("stopped the command (pid %d) with %s: tracing ended before it exited; it %s", t.cmd.pid(), unix.SignalName(sig), t.cmd.status())
	} else {
		t.status.infof("command %s after tracing ended", t.cmd.status())
	}
}

// checkTraceable rejects what cannot work before anything is started,
// and plans the outputs.
func checkTraceable(cfg *config) (*output.Dests, error) {
	if len(cfg.command) > 0 {
		if _, err := startCheck(cfg.command[0]); err != nil {
			return nil, err
		}
	}
	if cfg.pid != 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", cfg.pid)); err != nil {
			return nil, usagef("no process with pid %d: check the pid (ps -e) or start the program with -- CMD", cfg.pid)
		}
	}
	err := bpf.CheckMemory(bpf.Options{MaxStacks: cfg.maxStacks, TableBudget: uint64(cfg.unwindBudget), DWARF: cfg.unwind.dwarf()})
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	dests, err := output.Plan(cfg.outputs)
	if err != nil {
		return nil, &usageError{err.Error()}
	}
	return dests, nil
}

// openTarget holds the -p process by a pidfd.
func openTarget(pid int) (*proctrack.Target, error) {
	tg, err := proctrack.OpenTarget(pid)
	if errors.Is(err, unix.ESRCH) {
		return nil, usagef("no process with pid %d: check the pid (ps -e) or start the program with -- CMD", pid)
	}
	return tg, err
}

// resolveAll turns every probe's spec into targets (pure: files only).
func (t *tracer) resolveAll() error {
	specs := make([]probespec.Spec, len(t.cfg.probes))
	for i, p := range t.cfg.probes {
		if p.spec.Kind == probespec.Kprobe && !haveKprobes() {
			return kprobeUnavailable(p)
		}
		specs[i] = p.spec
	}
	if err := mountKernelFS(specs, t.status); err != nil {
		return err
	}
	for _, p := range t.cfg.probes {
		targets, err := t.res.Resolve(p.spec)
		if err != nil {
			return &exitError{1, fmt.Errorf("%s %s: %w", p.flag, quote(p.text), err)}
		}
		if targets, err = t.withReturns(p, targets); err != nil {
			return err
		}
		t.targets = append(t.targets, targets)
	}
	return nil
}

func (t *tracer) open() error {
	filter := t.cfg.pid != 0 || len(t.cfg.command) > 0
	// Hidden: the e2e tests run older kernels' fallbacks on this one.
	compat, err := bpf.ParseCompat(os.Getenv("PROBEE_COMPAT"))
	if err != nil {
		return fmt.Errorf("PROBEE_COMPAT: %w", err)
	}
	s, err := bpf.Open(bpf.Options{
		FilterPIDs: filter, MaxStacks: t.cfg.maxStacks, DWARF: t.dwarfOn(),
		NoTailCalls: t.cfg.noTail, TableBudget: uint64(t.cfg.unwindBudget), SampleProbe: uint32(len(t.cfg.probes)), IncludeIdle: t.cfg.idle,
		NoFindVMA: os.Getenv("PROBEE_NO_FIND_VMA") == "1", // hidden: tests/bench/65-system-wide.sh compares
		Measure: bpf.Measure{Mode: t.cfg.measureMode(), WeightArg: t.cfg.weight.arg,
			MinLatency: t.cfg.minLatency, Probes: len(t.cfg.probes)},
		NoDefer: os.Getenv("PROBEE_NO_DEFER") == "1", // hidden: likewise
		Compat:  compat,
	})
	if err != nil {
		return err
	}
	t.sess = s
	if err := s.StartWatchdog(); err != nil {
		t.status.warnf("%v: a process held at a gate stays stopped if probee is killed", err)
	}
	if t.dwarfOn() {
		t.openTables()
	}
	t.procs = proctrack.New(proctrack.Config{
		Kernel: s, History: t.sym.History(), Tables: t.dwarfOn(), TableCache: t.tables,
		GoByFramePointers: t.cfg.unwind.goByFramePointers(), SystemWide: !filter,
		Containers: t.cfg.groupBy == groupContainer,
		Warnf:      t.status.warnf, Debugf: t.status.debugf,
	})
	if t.dwarfOn() {
		t.status.infof("DWARF unwinding: %s", depthText(t.cfg.noTail))
	}
	if t.mmaps, err = bpf.WatchMmaps(bpf.MmapHandlers{Ordered: t.procs.OnMmap, Early: t.procs.OnMmapRead}); err != nil {
		return err
	}
	t.procs.SetRecordWake(t.mmaps.Kick)
	if !filter {
		t.procs.ReadRunning() // system-wide: the processes already running
	}
	if t.stopDef, err = s.Deferred(t.procs.OnDeferred); err != nil {
		return err
	}
	t.stopEv, err = s.Events(t.procs.OnProcessEvent)
	return err
}

func (t *tracer) dwarfOn() bool { return t.cfg.unwind.dwarf() }

// track follows the -p process or the paused command.
func (t *tracer) track() error {
	switch {
	case t.cmd != nil: // stopped right after its exec
		// The records of that exec are handled first: one handled after
		// TracePID would read as a later exec, and drop its snapshot.
		t.mmaps.Flush()
		return t.procs.TracePID(t.cmd.pid())
	case t.target != nil:
		return t.procs.TraceTarget(t.target)
	}
	return nil
}

// depthText says how deep the kernel walks DWARF stacks.
func depthText(noTail bool) string {
	if noTail {
		return fmt.Sprintf("inline loop, up to %d frames", bpf.InlineDepth())
	}
	return fmt.Sprintf("tail calls, up to %d frames", min(bpf.MaxUserStack, bpf.StepFrames*bpf.MaxTailCalls))
}

func (t *tracer) close() {
	if t.stopEv != nil {
		t.stopEv()
	}
	if t.stopDef != nil {
		t.stopDef()
	}
	if t.mmaps != nil {
		t.mmaps.Close()
	}
	start := time.Now()
	if err := t.sess.Close(); err != nil {
		t.status.warnf("detach: %v", err)
	}
	t.status.debugf("detached in %v", time.Since(start).Round(time.Millisecond))
	t.closeTables()
}

// wait blocks until Ctrl-C/SIGTERM, -d expiry, or the traced process ends,
// and reports whether the process ended first.
func (t *tracer) wait(ctx context.Context) bool {
	var timeout <-chan time.Time
	if t.cfg.duration > 0 {
		timer := time.NewTimer(t.cfg.duration)
		defer timer.Stop()
		timeout = timer.C
	}
	var exited <-chan struct{}
	switch {
	case t.cmd != nil:
		if err := t.cmd.release(); err != nil {
			t.status.warnf("start command: %v", err)
		}
		exited = t.cmd.done
	case t.target != nil:
		exited = t.target.Exited()
	}
	if t.cfg.interval > 0 {
		defer t.drainEvery(t.drainPeriod())()
	}
	prune := time.NewTicker(proctrack.PruneEvery)
	defer prune.Stop()
	for {
		select {
		case <-prune.C:
			t.procs.Prune()
		case <-ctx.Done():
			t.status.infof("interrupted: writing outputs")
			return false
		case <-timeout:
			return false
		case <-exited:
			if t.cmd != nil {
				t.status.infof("command %s", t.cmd.status())
			} else {
				t.status.infof("process %d exited", t.cfg.pid)
			}
			return true
		}
	}
}
