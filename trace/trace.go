package trace

import (
	"context"
	"errors"
	"fmt"
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

// tracer is one tracing run: resolved probes, the kernel session, the
// traced command or pid, the process tracker and the symbolizer it feeds.
type tracer struct {
	cfg         *Config
	status      Reporter
	cmd         *tracedCommand
	pidfd       *proctrack.Pidfd // -p, held by a pidfd
	sess        *bpf.Session
	res         *resolver.Resolver
	sym         *symbolize.Symbolizer
	targets     [][]resolver.AttachPoint // per probe id
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

// Run traces what cfg asks for until ctx is done (Ctrl-C, SIGTERM),
// cfg.Duration has passed or the traced process has ended, writes the
// outputs and returns the profile. Its status lines go to cfg.Status as
// it runs. A Result comes back whenever the counts were drained, with
// the error of an output that could not be written; what cfg asks for
// and cannot work is a *UsageError.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	dests, err := checkTraceable(&cfg)
	if err != nil {
		return nil, err
	}
	defer dests.Close()
	cfg.defaults()
	t := &tracer{cfg: &cfg, dests: dests, status: cfg.Status}
	if cfg.PID != 0 {
		tg, err := openPidfd(cfg.PID)
		if err != nil {
			return nil, err
		}
		t.pidfd = tg
		defer tg.Close()
	}
	scope := resolver.Scope{PID: cfg.PID, Command: cfg.Command}
	t.res = resolver.New(scope)
	t.sym = symbolize.New(symbolize.Config{Objects: t.res.Index()})
	if err := t.resolveAll(); err != nil {
		return nil, err
	}
	if err := t.open(); err != nil { // before the command starts: fail early
		return nil, err
	}
	defer t.close()
	if len(cfg.Command) > 0 {
		tc, err := startPaused(cfg.Command, commandStdout(&cfg))
		if err != nil {
			return nil, err
		}
		t.cmd = tc
		defer func() {
			if tc.held {
				tc.abort()
			}
		}()
	}
	return t.run(ctx)
}

// run attaches the probes, traces until wait returns and finishes.
func (t *tracer) run(ctx context.Context) (*Result, error) {
	if err := t.track(); err != nil {
		return nil, err
	}
	err := t.attachAll(ctx)
	t.sess.AttachDone()
	tightenGC()
	if err != nil {
		if ctx.Err() == nil {
			return nil, err
		}
		// Ctrl-C or SIGTERM while attaching: nothing ran; the deferred
		// abort kills a command held at its exec.
		t.status.Infof("interrupted while attaching the probes: %s; writing outputs", t.notStarted())
		if n, err := t.sess.HandOff(); err != nil {
			t.status.Warnf("detach: %v", err)
		} else {
			t.status.Debugf("%d links left to the watchdog to detach", n)
		}
		return t.finish(t.cfg.Stdout)
	}
	if err := t.startPush(); err != nil {
		return nil, err
	}
	// Processes gone for a while are merged without their pid and
	// forgotten (fold.go), so that a long run holds the processes that
	// run, not every one that ever hit a probe. PROBEE_MERGE_GONE=0
	// (hidden) keeps them all to the end, for tests/bench/53-churn.sh to
	// compare. Not with --push, whose deltas need every count to stay in
	// the session.
	if t.push == nil && os.Getenv("PROBEE_MERGE_GONE") != "0" {
		t.folded = newFoldState(t.sym, t.sess.MaxStacks())
		t.folded.sf.marks = t.stateMarks()
	}
	exited := t.wait(ctx)
	res, err := t.finish(t.cfg.Stdout)
	t.stopCommand()
	if err == nil && exited && t.cmd != nil && t.cmd.exitCode() > 0 {
		res.CommandExit = t.cmd.exitCode()
	}
	return res, err
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
		t.status.Infof("stopped the command (pid %d) with %s: tracing ended before it exited; it %s", t.cmd.pid(), unix.SignalName(sig), t.cmd.status())
	} else {
		t.status.Infof("command %s after tracing ended", t.cmd.status())
	}
}

// checkTraceable rejects what cannot work before anything is started,
// and plans the outputs.
func checkTraceable(cfg *Config) (*output.Dests, error) {
	if len(cfg.Command) > 0 {
		if _, err := CheckCommand(cfg.Command[0]); err != nil {
			return nil, err
		}
	}
	if cfg.PID != 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", cfg.PID)); err != nil {
			return nil, usagef("no process with pid %d: check the pid (ps -e) or start the program with -- CMD", cfg.PID)
		}
	}
	err := bpf.CheckMemory(bpf.Options{MaxStacks: cfg.MaxStacks, TableBudget: uint64(cfg.UnwindBudget), DWARF: cfg.Unwind.dwarf()})
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	dests, err := output.Plan(cfg.Outputs)
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	return dests, nil
}

// openPidfd holds the -p process by a pidfd.
func openPidfd(pid int) (*proctrack.Pidfd, error) {
	tg, err := proctrack.OpenPidfd(pid)
	if errors.Is(err, unix.ESRCH) {
		return nil, usagef("no process with pid %d: check the pid (ps -e) or start the program with -- CMD", pid)
	}
	return tg, err
}

// resolveAll turns every probe's spec into targets (pure: files only).
func (t *tracer) resolveAll() error {
	specs := make([]probespec.Spec, len(t.cfg.Probes))
	for i, p := range t.cfg.Probes {
		if p.Spec.Kind == probespec.Kprobe && !haveKprobes() {
			return kprobeUnavailable(p)
		}
		specs[i] = p.Spec
	}
	if err := MountKernelFS(specs, t.status); err != nil {
		return err
	}
	for _, p := range t.cfg.Probes {
		targets, err := t.res.Resolve(p.Spec)
		if err != nil {
			return fmt.Errorf("%s %s: %w", p.Flag, Quote(p.Text), err)
		}
		if targets, err = t.withReturns(p, targets); err != nil {
			return err
		}
		t.targets = append(t.targets, targets)
	}
	return nil
}

func (t *tracer) open() error {
	filter := t.cfg.PID != 0 || len(t.cfg.Command) > 0
	opts, err := t.sessionOptions(filter)
	if err != nil {
		return err
	}
	s, err := bpf.Open(opts)
	if err != nil {
		return err
	}
	t.sess = s
	if err := s.StartWatchdog(); err != nil {
		t.status.Warnf("%v: a process held at a gate stays stopped if probee is killed", err)
	}
	if t.dwarfOn() {
		t.openTables()
	}
	t.procs = proctrack.New(proctrack.Config{
		Kernel: s, History: t.sym.History(), Tables: t.dwarfOn(), TableCache: t.tables,
		GoByFramePointers: t.cfg.Unwind.goByFramePointers(), SystemWide: !filter,
		Containers: t.cfg.ByContainer,
		Warnf:      t.status.Warnf, Debugf: t.status.Debugf,
	})
	if t.dwarfOn() {
		t.status.Infof("DWARF unwinding: %s", depthText(t.cfg.NoTailCalls))
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

// sessionOptions are the bpf session's options for the run (filter: only
// the -p process or the command and their children are traced).
func (t *tracer) sessionOptions(filter bool) (bpf.Options, error) {
	// Hidden: the e2e tests run older kernels' fallbacks on this one.
	compat, err := bpf.ParseCompat(os.Getenv("PROBEE_COMPAT"))
	if err != nil {
		return bpf.Options{}, fmt.Errorf("PROBEE_COMPAT: %w", err)
	}
	return bpf.Options{
		FilterPIDs: filter, MaxStacks: t.cfg.MaxStacks, DWARF: t.dwarfOn(),
		NoTailCalls: t.cfg.NoTailCalls, TableBudget: uint64(t.cfg.UnwindBudget), SampleProbe: t.sampleProbe(), IncludeIdle: t.cfg.IncludeIdle, ExcludeSelf: true,
		NoFindVMA: os.Getenv("PROBEE_NO_FIND_VMA") == "1", // hidden: tests/bench/65-system-wide.sh compares
		Measure: bpf.Measure{Mode: t.cfg.MeasureMode(), WeightArg: t.cfg.weightArg(),
			MinLatency: t.cfg.MinLatency, Probes: len(t.cfg.Probes)},
		NoDefer: os.Getenv("PROBEE_NO_DEFER") == "1", // hidden: likewise
		Compat:  compat,
		OffCPU:  t.offCPUOptions(),
	}, nil
}

func (t *tracer) dwarfOn() bool { return t.cfg.Unwind.dwarf() }

// track follows the -p process or the paused command.
func (t *tracer) track() error {
	switch {
	case t.cmd != nil: // stopped right after its exec
		// The records of that exec are handled first: one handled after
		// TracePID would read as a later exec, and drop its snapshot.
		t.mmaps.Flush()
		return t.procs.TracePID(t.cmd.pid())
	case t.pidfd != nil:
		return t.procs.TracePidfd(t.pidfd)
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
		t.status.Warnf("detach: %v", err)
	}
	t.status.Debugf("detached in %v", time.Since(start).Round(time.Millisecond))
	t.closeTables()
}

// wait blocks until Ctrl-C/SIGTERM, -d expiry, or the traced process ends,
// and reports whether the process ended first.
func (t *tracer) wait(ctx context.Context) bool {
	var timeout <-chan time.Time
	if t.cfg.Duration > 0 {
		timer := time.NewTimer(t.cfg.Duration)
		defer timer.Stop()
		timeout = timer.C
	}
	var exited <-chan struct{}
	switch {
	case t.cmd != nil:
		if err := t.cmd.release(); err != nil {
			t.status.Warnf("start command: %v", err)
		}
		exited = t.cmd.done
	case t.pidfd != nil:
		exited = t.pidfd.Exited()
	}
	if t.cfg.Interval > 0 {
		defer t.drainEvery(t.drainPeriod())()
	}
	prune := time.NewTicker(proctrack.PruneEvery)
	defer prune.Stop()
	for {
		select {
		case <-prune.C:
			t.procs.Prune()
		case <-ctx.Done():
			t.status.Infof("interrupted: writing outputs")
			return false
		case <-timeout:
			return false
		case <-exited:
			if t.cmd != nil {
				t.status.Infof("command %s", t.cmd.status())
			} else {
				t.status.Infof("process %d exited", t.cfg.PID)
			}
			return true
		}
	}
}
