package trace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
)

// attachAll attaches every probe and reports what was attached.
// Once ctx is done (Ctrl-C, SIGTERM) it stops before the next link and
// returns ctx's error.
func (t *tracer) attachAll(ctx context.Context) error {
	start := time.Now()
	n := attachTally{up: linkCount{kind: "uprobe"}, kp: linkCount{kind: "kprobe"}}
	for id, targets := range t.targets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := t.attachProbe(ctx, uint32(id), targets, &n); err != nil {
			return err
		}
	}
	if t.sampling() {
		if err := t.sess.AttachSampling(t.cfg.Freq); err != nil {
			return fmt.Errorf("--sample: %w", err)
		}
		t.status.Infof("sampling every CPU at %d Hz", t.cfg.Freq)
	}
	if err := t.attachOffCPU(); err != nil {
		return err
	}
	if len(t.targets) == 0 {
		return nil
	}
	if n.up.attached == 0 && n.tps == 0 && n.kp.attached == 0 {
		return fmt.Errorf("the kernel refused every target (%d skipped): nothing to trace", n.up.skipped+n.kp.skipped)
	}
	t.status.Infof("attached %s for %s in %v", attachedText(n.up, n.kp, n.tps),
		plural(len(t.targets), "probe"), millis(time.Since(start)))
	return nil
}

// attachTally sums what the probes of a run attached.
type attachTally struct {
	up, kp linkCount
	tps    int // tracepoints
}

// attachProbe attaches probe id to its targets, adding them to n.
func (t *tracer) attachProbe(ctx context.Context, id uint32, targets []resolver.AttachPoint, n *attachTally) error {
	p := t.cfg.Probes[id]
	switch p.Spec.Kind {
	case probespec.Tracepoint:
		for _, tg := range targets {
			if err := t.sess.AttachTracepoint(id, tg.Category, tg.Name); err != nil {
				return fmt.Errorf("%s %s: %w", p.Flag, Quote(p.Text), err)
			}
			n.tps++
		}
		return nil
	case probespec.Kprobe:
		return t.attachKprobes(ctx, id, p, targets, &n.kp)
	}
	// No kernel pid filter (it would exclude the children the process
	// forks): the in-kernel pids map keeps -p to the process and its
	// children, as it does for -- CMD.
	ups := t.uprobeTargets(targets)
	if p.Spec.Kind == probespec.USDT {
		ups = usdtTargets(targets)
	}
	st, err := t.sess.AttachUprobes(ctx, id, ups, 0, t.cfg.NoUprobeMulti)
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.Flag, Quote(p.Text), err)
	}
	n.up.attached += st.Attached
	n.up.skipped += len(st.Skipped)
	n.up.multi = n.up.multi || st.Multi
	t.warnSkipped(p, st.Skipped)
	return nil
}

// linkCount sums what the uprobe or kprobe specs of a run attached.
type linkCount struct {
	kind              string // "uprobe", "kprobe"
	attached, skipped int
	multi             bool // some went through one uprobe_multi/kprobe_multi link
}

func (c linkCount) String() string {
	s := plural(c.attached, c.kind)
	if c.skipped > 0 {
		s += fmt.Sprintf(" (%d skipped)", c.skipped)
	}
	if c.multi {
		s += fmt.Sprintf(" (%s_multi)", c.kind)
	}
	return s
}

func attachedText(up, kp linkCount, tps int) string {
	var parts []string
	for _, c := range []linkCount{up, kp} {
		if c.attached > 0 || c.skipped > 0 {
			parts = append(parts, c.String())
		}
	}
	if tps > 0 {
		parts = append(parts, plural(tps, "tracepoint"))
	}
	return strings.Join(parts, " and ")
}

// millis formats d for status lines: "84 ms", "0.4 ms".
func millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 10 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// warnSkipped names the targets the kernel refused (at most 10, then a count).
func (t *tracer) warnSkipped(p Probe, skipped []bpf.Skipped) {
	for i, s := range skipped {
		if i == 10 {
			t.status.Warnf("%s: ... and %d more refused targets", p.Text, len(skipped)-10)
			return
		}
		t.status.Warnf("%s: skipped %s:%s (offset 0x%x): the kernel refused it: %v",
			p.Text, s.Target.Path, s.Target.Name, s.Target.Offset, s.Err)
	}
}

func (t *tracer) uprobeTargets(targets []resolver.AttachPoint) []bpf.UprobeTarget {
	out := make([]bpf.UprobeTarget, 0, len(targets))
	for _, tg := range targets {
		name := tg.Symbol
		if tg.Offset != 0 {
			name = fmt.Sprintf("%s+0x%x", name, tg.Offset)
		}
		out = append(out, bpf.UprobeTarget{
			Path:    tg.Path,
			Offset:  tg.FileOffset + tg.Offset,     // FileOffset is the function's start
			Entry:   tg.Offset == 0 && !tg.RetInsn, // a line probe at offset 0 is the entry too
			Ret:     tg.Ret,
			RetInsn: tg.RetInsn,
			Go:      tg.Go,
			Size:    tg.Size,
			Return:  t.returnSide(tg),
			Name:    name,
		})
	}
	return out
}

// usdtTargets puts a uprobe at every site of every USDT probe, with its
// semaphore's file offset as the uprobe's reference counter.
func usdtTargets(targets []resolver.AttachPoint) []bpf.UprobeTarget {
	var out []bpf.UprobeTarget
	for _, tg := range targets {
		for _, s := range tg.Sites {
			out = append(out, bpf.UprobeTarget{
				Path:         tg.Path,
				Offset:       s.FileOffset,
				Name:         fmt.Sprintf("%s:%s@0x%x", tg.Provider, tg.Name, s.Address),
				RefCtrOffset: s.SemaphoreOffset,
			})
		}
	}
	return out
}
