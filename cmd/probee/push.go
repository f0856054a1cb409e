package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/output"
	"github.com/probee/probee/push"
)

// pushState is a run's --push: the pusher and when the current interval began.
type pushState struct {
	p    *push.Pusher
	last time.Time // end of the last interval pushed
}

// startPush starts the pusher when --push was given.
func (t *tracer) startPush() error {
	pa := &t.cfg.push
	if pa.url == "" {
		return nil
	}
	host, _ := os.Hostname()
	labels := append([]push.Label{{Name: push.LabelService, Value: t.serviceName(host)},
		{Name: push.LabelHost, Value: host}}, pa.labels...)
	p, err := push.New(push.Config{Target: pa.target, Labels: labels, Queue: pa.queue,
		QueueBytes: int64(pa.queueBytes), Backoff: push.DefaultBackoff, Logf: t.status.Warnf})
	if err != nil {
		return err
	}
	t.sym.SetInline(!t.cfg.noInline)
	t.push = &pushState{p: p, last: time.Now()}
	t.status.Infof("pushing to %s %s every %v (queue %d profiles, %s), service_name %s",
		pa.target.Backend, pa.target.URL.Redacted(), pa.interval, pa.queue, safeelf.Size(pa.queueBytes), labels[0].Value)
	return nil
}

// serviceName is --service-name, else the traced command's base name, else host.
func (t *tracer) serviceName(host string) string {
	switch {
	case t.cfg.push.serviceName != "":
		return t.cfg.push.serviceName
	case len(t.cfg.command) > 0:
		return filepath.Base(t.cfg.command[0])
	case host != "":
		return host
	}
	return "probee"
}

// drainPeriod is how often the drain goroutine wakes: --interval, or
// --push-interval when that is shorter.
func (t *tracer) drainPeriod() time.Duration {
	if t.push != nil {
		return min(t.cfg.interval, t.cfg.push.interval)
	}
	return t.cfg.interval
}

// pushDue pushes what the periodic drains moved since the last push, once
// --push-interval has passed. It runs on the drain goroutine (interval.go).
func (t *tracer) pushDue(now time.Time) {
	// Half a drain period early: the ticks drift around the interval.
	if t.push == nil || now.Sub(t.push.last) < t.cfg.push.interval-t.drainPeriod()/2 {
		return
	}
	snap, err := t.sess.Drained(len(t.labels()))
	if err != nil {
		t.status.Warnf("push: read counts: %v (they go with the next push)", err)
		return
	}
	t.push.p.Push(t.profile(snap), t.push.last, now)
	t.push.last = now
}

// finishPush pushes the final profile (nil: none) and flushes within
// --push-flush-timeout.
func (t *tracer) finishPush(prof *output.Profile) {
	if t.push == nil {
		return
	}
	if prof != nil {
		t.push.p.Push(prof, t.push.last, time.Now())
	}
	st := t.push.p.Close(t.cfg.push.flushTimeout)
	t.push = nil
	t.reportPush(st)
}

// pushUnit is what the events of pushed profiles are: what the local
// outputs count.
func (t *tracer) pushUnit() string {
	switch {
	case t.cfg.latency:
		return "ns"
	case t.cfg.weight.set:
		return t.cfg.weight.unit
	case t.cfg.sample && len(t.cfg.probes) == 0:
		return "samples"
	}
	return "hits"
}

// reportPush prints what was sent and every drop, per probe, with the
// events (hits, samples, ns or weight) the profiles held: pushed plus
// dropped events are the local outputs' totals.
func (t *tracer) reportPush(st push.Stats) {
	sent, dropped, unit := st.Sent(), st.Dropped(), t.pushUnit()
	t.status.Infof("push: %s sent (%d %s), %d retries", plural(sent.Profiles, "profile"), sent.Events, unit, st.Retries)
	for _, label := range st.ProbeLabels() {
		ps := st.Probes[label]
		for _, reason := range []string{push.DropQueueFull, push.DropQueueBytes, push.DropRejected, push.DropUnsent, push.DropEncode} {
			if d := ps.Dropped[reason]; d.Profiles > 0 {
				t.status.Warnf("push: dropped %s of %s (%d %s): %s", plural(d.Profiles, "profile"), label, d.Events, unit, reason)
			}
		}
	}
	if dropped.Profiles == 0 {
		t.status.Infof("push: no drops")
	} else if st.LastErr != "" {
		t.status.Warnf("push: last error: %s", st.LastErr)
	}
}
