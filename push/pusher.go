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
	Target  Target
	Labels  []Label // on every series: service_name, hostname, --label pairs
	Queue   int     // profiles that may wait while one is being sent (at least 1)
	Backoff Backoff
	Client  *http.Client // nil: one with a 10s timeout per request
	// Logf reports the backend going down and coming back (nil: silent).
	Logf func(format string, args ...any)
	// after waits between attempts (nil: time.After); tests record the waits.
	after func(time.Duration) <-chan time.Time
}

// Backoff is the wait between attempts: Initial, doubled after every failed
// attempt up to Max; a success starts again at Initial.
type Backoff struct{ Initial, Max time.Duration }

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
// never blocks on the network: when the queue is full the oldest waiting
// profile is dropped (and counted), so memory stays bounded while the
// backend is down and the newest data wins. The profile being sent is not
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
	closing bool
	stats   Stats
	failing bool // the last attempt failed
}

// New starts a Pusher; Close stops it.
func New(cfg Config) (*Pusher, error) {
	if cfg.Queue < 1 {
		return nil, errors.New("push queue: want at least 1 profile")
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

// enqueue adds it, dropping the oldest waiting profile when full. Call with mu held.
func (p *Pusher) enqueue(it *item) {
	if len(p.queue) >= p.cfg.Queue {
		p.stats.drop(p.queue[0], DropQueueFull)
		p.queue = p.queue[1:]
	}
	p.queue = append(p.queue, it)
	p.signal()
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
	p.queue = nil
	return p.stats.clone()
}
