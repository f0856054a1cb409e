package push

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/probee/probee/output"
)

// Config configures a Pusher.
type Config struct {
	Endpoint Endpoint
	Labels   []Label // on every series: service_name, hostname, --label pairs
	Queue    int     // profiles that may wait while one is being sent (at least 1)
	// QueueBytes bounds the encoded size of the profiles waiting together
	// (0: DefaultQueueBytes); the newest one waits even when it is larger.
	QueueBytes int64
	Backoff    Backoff
	Client     *http.Client // nil: one with a 10s timeout per request
	// Logf reports the backend going down and coming back (nil: silent).
	Logf func(format string, args ...any)
	// after waits between attempts (nil: time.After); tests record the waits.
	after func(time.Duration) <-chan time.Time
}

// Backoff is the wait between attempts: Initial, doubled after every failed
// attempt up to Max; a success starts again at Initial.
type Backoff struct{ Initial, Max time.Duration }

// DefaultQueueBytes is the default bound of the waiting profiles' encoded
// size: a system-wide run's profile of an interval can take megabytes, and
// a count of profiles alone would let a down backend cost gigabytes.
const DefaultQueueBytes = 64 << 20

// DefaultBackoff waits 250ms, 500ms, 1s, ... 8s between attempts.
var DefaultBackoff = Backoff{Initial: 250 * time.Millisecond, Max: 8 * time.Second}

// item is one probe's profile of one interval, encoded.
type item struct {
	probe  string
	name   string // __name__
	body   []byte // gzipped pprof
	events uint64 // what the local outputs count for these samples
}

// Pusher sends interval profiles to a backend from its own goroutine. Push
// never blocks on the network: when the queue holds Queue profiles, or the
// next one would take the waiting profiles past QueueBytes, the oldest
// waiting ones are dropped (and counted), so memory stays bounded while
// the backend is down (QueueBytes, or the newest profile when it alone is
// larger, plus the one being sent) and the newest data wins. The profile being sent is not
// in the queue: it is retried, with backoff, until it is delivered,
// rejected, or Close's timeout runs out.
type Pusher struct {
	cfg    Config
	client client
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	pmu   sync.Mutex // serializes Push: one Delta
	delta Delta

	mu      sync.Mutex
	wake    chan struct{} // a token when the queue gets an item or closes
	queue   []*item
	queued  int64 // bytes of the bodies in queue
	closing bool
	stats   Stats
	failing bool // the last attempt failed
}

// New starts a Pusher; Close stops it.
func New(cfg Config) (*Pusher, error) {
	if cfg.Queue < 1 {
		return nil, errors.New("push queue: want at least 1 profile")
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.Backoff.Initial <= 0 || cfg.Backoff.Max < cfg.Backoff.Initial {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.after == nil {
		cfg.after = time.After
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	p := &Pusher{cfg: cfg, client: newClient(cfg), done: make(chan struct{}), wake: make(chan struct{}, 1)}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.run()
	return p, nil
}

// Push queues the counts cum holds beyond the previous cumulative profile
// given to Push, one profile per probe with new counts, covering start to
// end. cum is the run's whole profile so far (see Delta).
func (p *Pusher) Push(cum *output.Profile, start, end time.Time) {
	p.pmu.Lock()
	d := p.delta.Next(cum)
	p.pmu.Unlock()
	d.Start, d.Duration = start, end.Sub(start)
	for _, sub := range splitProbes(d) {
		it, err := encode(sub)
		p.mu.Lock()
		if err != nil {
			p.stats.drop(it, DropEncode)
			p.stats.LastErr = err.Error()
		} else {
			p.enqueue(it)
		}
		p.mu.Unlock()
	}
}

// enqueue adds it, dropping the oldest waiting profiles while the queue is
// full or would be past its bytes with it. Call with mu held.
func (p *Pusher) enqueue(it *item) {
	for len(p.queue) > 0 {
		reason := DropQueueFull
		if len(p.queue) < p.cfg.Queue {
			if p.queued+int64(len(it.body)) <= p.cfg.QueueBytes {
				break
			}
			reason = DropQueueBytes
		}
		p.stats.drop(p.pop(), reason)
	}
	p.queue = append(p.queue, it)
	p.queued += int64(len(it.body))
	p.signal()
}

// pop takes the oldest waiting profile. Call with mu held, the queue not empty.
func (p *Pusher) pop() *item {
	it := p.queue[0]
	p.queue[0] = nil // let its body go
	p.queue = p.queue[1:]
	p.queued -= int64(len(it.body))
	return it
}

func (p *Pusher) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats returns what the Pusher did so far.
func (p *Pusher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats.clone()
}

// Close sends what waits, for at most timeout, then stops: profiles still
// waiting are counted as dropped (DropUnsent). It returns the final Stats.
func (p *Pusher) Close(timeout time.Duration) Stats {
	p.mu.Lock()
	p.closing = true
	p.signal()
	p.mu.Unlock()
	timer := time.AfterFunc(timeout, p.cancel)
	<-p.done
	timer.Stop()
	p.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range p.queue {
		p.stats.drop(it, DropUnsent)
	}
	p.queue, p.queued = nil, 0
	return p.stats.clone()
}
