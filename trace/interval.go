package trace

import (
	"sync"
	"time"
)

// fillCheck is how often drainEvery asks whether a kernel map is half
// full: at ~130K new stacks a second (manystacks under a uprobe) the
// other half takes 250 ms to fill.
const fillCheck = 10 * time.Millisecond

// drainEvery moves the kernel's counts into probee every d (--interval) in
// its own goroutine, merges those of processes gone for a while (fold.go),
// and pushes them when --push-interval is due (push.go),
// so a slow drain or push never delays Ctrl-C, -d expiry or the traced
// command's exit. Between ticks it asks every fillCheck whether a kernel
// map is half full (Session.DrainDue) and drains at once if so. The
// returned stop waits for a drain in progress.
func (t *tracer) drainEvery(d time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(d)
		defer tick.Stop()
		check := time.NewTicker(min(fillCheck, d))
		defer check.Stop()
		warned := false
		drain := func() {
			if err := t.sess.DrainInterval(); err != nil && !warned {
				t.status.Warnf("periodic drain: %v (counts stay in the kernel until the end)", err)
				warned = true
			}
		}
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				drain()
				t.pushDue(time.Now())
				t.foldGone(time.Now())
				releaseIdle(time.Now())
			case <-check.C:
				if t.sess.DrainDue() {
					t.earlyDrains.Add(1)
					drain()
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// reportDrains prints what the periodic drains did: a summary line when
// --interval was given (a progress line otherwise), and deferred drains.
func (t *tracer) reportDrains() {
	if t.cfg.Interval <= 0 {
		return
	}
	ds := t.sess.DrainStats()
	say := t.status.Debugf
	if t.cfg.IntervalGiven {
		say = t.status.Infof
	}
	say("periodic drains: %d every %v (%d early: a kernel map half full), %d events moved, longest wait for in-flight events %v",
		ds.Drains, t.cfg.Interval, t.earlyDrains.Load(), ds.Moved, ds.MaxWait.Round(time.Microsecond))
	if ds.Deferred > 0 {
		t.status.Infof("periodic drains: %d deferred to the next (an event was still counting after 1s)", ds.Deferred)
	}
}
