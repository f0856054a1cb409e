package trace

import (
	"context"
	"errors"
	"fmt"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/resolver"
)

// attachKprobes attaches one kprobe/kretprobe spec's functions.
func (t *tracer) attachKprobes(ctx context.Context, id uint32, p Probe, targets []resolver.AttachPoint, kp *linkCount) error {
	st, err := t.sess.AttachKprobes(ctx, id, t.kprobeTargets(targets), t.cfg.NoKprobeMulti)
	if errors.Is(err, bpf.ErrNoKprobes) {
		return kprobeUnavailable(p)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.Flag, Quote(p.Text), err)
	}
	kp.attached += st.Attached
	kp.skipped += len(st.Skipped)
	kp.multi = kp.multi || st.Multi
	for i, s := range st.Skipped {
		if i == 10 {
			t.status.Warnf("%s: ... and %d more refused functions", p.Text, len(st.Skipped)-10)
			break
		}
		t.status.Warnf("%s: skipped kernel function %s: the kernel refused it: %v", p.Text, s.Target.Symbol, s.Err)
	}
	return nil
}

func (t *tracer) kprobeTargets(targets []resolver.AttachPoint) []bpf.KprobeTarget {
	out := make([]bpf.KprobeTarget, 0, len(targets))
	for _, tg := range targets {
		out = append(out, bpf.KprobeTarget{Symbol: tg.Symbol, Module: tg.Module, Offset: tg.Offset, Ret: tg.Ret,
			Return: t.returnSide(tg)})
	}
	return out
}

// kprobeUnavailable is the one-line error for kprobe specs on a kernel
// without kprobes.
func kprobeUnavailable(p Probe) error {
	return fmt.Errorf("kprobes are not available on this kernel (CONFIG_KPROBES is not set): try --tracepoint (probee --list-probes 'tracepoint:*') for %s", Quote(p.Text))
}

// haveKprobes checks for the kprobe PMU or tracefs kprobe_events (not a
// program load, which succeeds even without CONFIG_KPROBES).
func haveKprobes() bool { return bpf.HaveKprobes() }
