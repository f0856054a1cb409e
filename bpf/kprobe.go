package bpf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
)

// KprobeTarget is one kernel function to probe.
type KprobeTarget struct {
	Symbol string // function name as in kallsyms
	Module string // "" for vmlinux; for messages
	Offset uint64 // bytes into the function (not with kprobe_multi)
	Ret    bool   // kretprobe
	Return bool   // MeasureLatency: the return side of a timed function (ends its call)
}

// KprobeSkipped is a function the kernel refused, with its reason.
type KprobeSkipped struct {
	Target KprobeTarget
	Err    error
}

// KprobeStats says what AttachKprobes did.
type KprobeStats struct {
	Attached int             // functions probed
	Links    int             // kernel links created
	Multi    bool            // kprobe_multi was used
	Skipped  []KprobeSkipped // refused functions, sorted by name
}

// ErrNoKprobes means the kernel cannot place kprobes at all.
var ErrNoKprobes = errors.New("kprobes are not available on this kernel (CONFIG_KPROBES is not set): try --tracepoint (probee --list-probes 'tracepoint:*')")

// HaveKprobes looks for the kprobe PMU or tracefs kprobe_events. A feature
// probe that only loads a kprobe program succeeds without CONFIG_KPROBES.
func HaveKprobes() bool {
	for _, p := range []string{"/sys/bus/event_source/devices/kprobe", "/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

var haveKmulti = sync.OnceValue(func() error { return features.HaveBPFLinkKprobeMulti() })

// HaveKprobeMulti reports whether the kernel supports kprobe_multi links.
func HaveKprobeMulti() bool { return HaveKprobes() && haveKmulti() == nil }

// AttachKprobes attaches probe to every target: one kprobe_multi link per
// (entry, return) group when the kernel has it and noMulti is false, one
// perf-event link per function otherwise. Functions the kernel refuses are
// skipped and listed; an error is returned for failures that are not about
// one function (no kprobes at all, no permission), or ctx's error once ctx
// is done (checked before each link).
func (s *Session) AttachKprobes(ctx context.Context, probe uint32, targets []KprobeTarget, noMulti bool) (KprobeStats, error) {
	var st KprobeStats
	if !HaveKprobes() {
		return st, ErrNoKprobes
	}
	var singles []KprobeTarget
	type side struct{ ret, retSide bool }
	multi := map[side][]KprobeTarget{}
	useMulti := !noMulti && HaveKprobeMulti() && s.haveCookies()
	for _, t := range targets {
		if useMulti && t.Offset == 0 {
			k := side{t.Ret, t.Return}
			multi[k] = append(multi[k], t)
		} else {
			singles = append(singles, t)
		}
	}
	if len(multi) > 0 {
		st.Multi = true
	}
	for _, k := range []side{{false, false}, {true, false}, {true, true}} {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := s.attachKmulti(ctx, probe, multi[k], &st); err != nil {
			return st, err
		}
	}
	if err := s.attachKsingles(ctx, probe, singles, &st); err != nil {
		return st, err
	}
	sort.Slice(st.Skipped, func(i, j int) bool { return st.Skipped[i].Target.Symbol < st.Skipped[j].Target.Symbol })
	return st, nil
}

// attachKmulti attaches g with one kprobe_multi link; a refused link is
// split in halves until the refused functions are isolated and skipped
// (splitRefused). A kernel without kprobe_multi gets one link per function.
func (s *Session) attachKmulti(ctx context.Context, probe uint32, g []KprobeTarget, st *KprobeStats) error {
	if len(g) == 0 {
		return nil
	}
	prog, err := s.program(sideName("kprobe_multi", g[0].Return)) // g is all entries or all returns
	if err != nil {
		return err
	}
	try := func(part []KprobeTarget) error {
		opts := link.KprobeMultiOptions{}
		for _, t := range part {
			opts.Symbols = append(opts.Symbols, t.Symbol)
			opts.Cookies = append(opts.Cookies, uint64(probe))
		}
		attach := link.KprobeMulti
		if part[0].Ret {
			attach = link.KretprobeMulti
		}
		l, err := attach(prog, opts)
		if err == nil {
			s.addLink(l)
			st.Attached += len(part)
			st.Links++
		}
		return err
	}
	stop := func(part []KprobeTarget, err error) (error, bool) {
		switch {
		case errors.Is(err, os.ErrPermission):
			return fmt.Errorf("attach kprobes: %w", attachHint(err)), true
		case errors.Is(err, ebpf.ErrNotSupported):
			return s.attachKsingles(ctx, probe, part, st), true
		}
		return nil, false
	}
	skip := func(t KprobeTarget, err error) { st.Skipped = append(st.Skipped, KprobeSkipped{t, err}) }
	return splitRefused(g, try, stop, skip)
}

func (s *Session) attachKsingles(ctx context.Context, probe uint32, g []KprobeTarget, st *KprobeStats) error {
	for _, t := range g {
		if err := ctx.Err(); err != nil {
			return err
		}
		attach := link.Kprobe
		if t.Ret {
			attach = link.Kretprobe
		}
		prog, c, err := s.cookieProgram(sideName("kprobe", t.Return), uint64(probe))
		if err != nil {
			return err
		}
		l, err := attach(t.Symbol, prog, &link.KprobeOptions{Cookie: c, Offset: t.Offset})
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return fmt.Errorf("attach kprobe %s: %w", t.Symbol, attachHint(err))
			}
			if errors.Is(err, ebpf.ErrNotSupported) && !HaveKprobes() {
				return ErrNoKprobes
			}
			st.Skipped = append(st.Skipped, KprobeSkipped{t, err})
			continue
		}
		s.addLink(l)
		st.Attached++
		st.Links++
	}
	return nil
}
