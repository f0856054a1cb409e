package push

import (
	"errors"

	"github.com/probee/probee/internal/safeelf"
)

// run sends queued profiles one at a time until Close.
func (p *Pusher) run() {
	defer close(p.done)
	for {
		it := p.next()
		if it == nil {
			return
		}
		p.deliver(it)
	}
}

// next takes the oldest waiting profile; nil when closing with an empty
// queue, or when the flush timeout ran out.
func (p *Pusher) next() *item {
	for {
		p.mu.Lock()
		if p.ctx.Err() != nil || p.closing && len(p.queue) == 0 {
			p.mu.Unlock()
			return nil
		}
		if len(p.queue) > 0 {
			it := p.pop()
			p.mu.Unlock()
			return it
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-p.ctx.Done():
		}
	}
}

// deliver sends it until it is accepted or rejected, or the flush timeout
// runs out, waiting with exponential backoff between attempts.
func (p *Pusher) deliver(it *item) {
	wait := p.cfg.Backoff.Initial
	for {
		err := p.client.send(p.ctx, it)
		if p.settle(it, err) {
			return
		}
		select {
		case <-p.cfg.after(wait):
		case <-p.ctx.Done():
			p.mu.Lock()
			p.stats.drop(it, DropUnsent)
			p.mu.Unlock()
			return
		}
		wait = min(2*wait, p.cfg.Backoff.Max)
	}
}

// settle records an attempt's outcome and reports whether it is final.
func (p *Pusher) settle(it *item, err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.stats.probe(it.probe).Sent.add(it)
		if p.failing {
			p.logf("push: %s reachable again", p.cfg.Endpoint.URL.Redacted())
		}
		p.failing = false
		return true
	}
	p.stats.Failures++
	p.stats.LastErr = err.Error()
	var rej *rejectedError
	if errors.As(err, &rej) {
		p.stats.drop(it, DropRejected)
		p.logf("push: %s profile of %s: %v", it.name, it.probe, err)
		return true
	}
	if p.ctx.Err() != nil {
		p.stats.drop(it, DropUnsent)
		return true
	}
	p.stats.Retries++
	if !p.failing {
		p.logf("push: %v (retrying, up to every %v; new profiles wait in a queue of %d, %s)", err, p.cfg.Backoff.Max, p.cfg.Queue, safeelf.Size(uint64(p.cfg.QueueBytes)))
	}
	p.failing = true
	return false
}

func (p *Pusher) logf(format string, args ...any) {
	if p.cfg.Logf != nil {
		p.cfg.Logf(format, args...)
	}
}
