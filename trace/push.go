package trace

import (
	"fmt"
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
	pa := t.cfg.Push
	if pa == nil {
		return nil
	}
	host, _ := os.Hostname()
	labels := append([]push.Label{{Name: push.LabelService, Value: t.serviceName(host)},
		{Name: push.LabelHost, Value: host}}, pa.Labels...)
	p, err := push.New(push.Config{Endpoint: pa.Endpoint, Labels: labels, Queue: pa.Queue,
		QueueBytes: int64(pa.QueueBytes), Backoff: push.DefaultBackoff, Logf: t.status.Warnf})
	if err != nil {
		return err
	}
	t.sym.SetInline(!t.cfg.NoInline)
	t.push = &pushState{p: p, last: time.Now()}
	t.status.Infof("pushing to %s %s every %v (queue %d profiles, %s), service_name %s",
		pa.Endpoint.Backend, pa.Endpoint.URL.Redacted(), pa.Interval, pa.Queue, safeelf.Size(pa.QueueBytes), labels[0].Value)
	return nil
}

// serviceName is --service-name, else the traced command's base name, else host.
func (t *tracer) serviceName(host string) string {
	switch {
	case t.cfg.Push.ServiceName != "":
		return t.cfg.Push.ServiceName
	case len(t.cfg.Command) > 0:
		return filepath.Base(t.cfg.Command[0])
	case host != "":
		return host
	}
	return "probee"
}

// drainPeriod is how often the drain goroutine wakes: --interval, or
// --push-interval when that is shorter.
func (t *tracer) drainPeriod() time.Duration {
	if t.push != nil {
		return min(t.cfg.Interval, t.cfg.Push.Interval)
	}
	return t.cfg.Interval
}

// pushDue pushes what the periodic drains moved since the last push, once
// --push-interval has passed. It runs on the drain goroutine (interval.go).
func (t *tracer) pushDue(now time.Time) {
	// Half a drain period early: the ticks drift around the interval.
	if t.push == nil || now.Sub(t.push.last) < t.cfg.Push.Interval-t.drainPeriod()/2 {
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
// --push-flush-timeout. A run that had profiles to send and could send
// none (the server down all along, every one refused) fails: it exited 0
// with "0 profiles sent", and a script took that for success.
func (t *tracer) finishPush(prof *output.Profile) error {
	if t.push == nil {
		return nil
	}
	if prof != nil {
		t.push.p.Push(prof, t.push.last, time.Now())
	}
	url := t.cfg.Push.Endpoint.URL.Redacted()
	st := t.push.p.Close(t.cfg.Push.FlushTimeout)
	t.push = nil
	t.reportPush(st)
	if st.Sent().Profiles == 0 && st.Dropped().Profiles > 0 {
		return fmt.Errorf("push: none of %s could be sent to %s (the local outputs are written)", plural(st.Dropped().Profiles, "profile"), url)
	}
	return nil
}

// pushUnit is what the events of pushed profiles are: what the local
// outputs count ("events" where probes of several units are pushed).
func (t *tracer) pushUnit() string {
	kinds := 0
	for _, on := range []bool{len(t.cfg.Probes) > 0, t.cfg.Sample, t.cfg.OffCPU, t.cfg.Wall} {
		if on {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return "events"
	case t.cfg.Latency, t.timingWaits():
		return "ns"
	case t.cfg.Weight != nil:
		return t.cfg.Weight.Unit
	case t.cfg.Sample:
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
