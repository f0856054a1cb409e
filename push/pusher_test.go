package push

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/probee/probee/output"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func newPusher(t *testing.T, f *fakeBackend, queue int, tune func(*Config)) *Pusher {
	u, _ := url.Parse(f.srv.URL)
	cfg := Config{
		Endpoint: Endpoint{Backend: f.backend, URL: u},
		Labels:   []Label{{LabelService, "app"}, {LabelHost, "h1"}, {"env", "prod"}},
		Queue:    queue, Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond},
	}
	if tune != nil {
		tune(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hits(samples ...output.Sample) *output.Profile {
	return &output.Profile{Measure: output.Measure{Kind: output.KindHits}, Probes: []string{"a", "b"}, Samples: samples}
}

// Every series carries exactly probee's labels, and requests the auth and
// tenant headers asked for.
func TestPushLabelsAndHeaders(t *testing.T) {
	for _, tc := range []struct {
		backend Backend
		auth    Auth
		tenant  string
		header  string
	}{
		{Pyroscope, Auth{}, "", ""},
		{Pyroscope, Auth{User: "u", Password: "p"}, "t1", "Basic dTpw"},
		{Parca, Auth{Token: "tok"}, "", "Bearer tok"},
		{Parca, Auth{}, "t2", ""},
	} {
		f := newFake(t, tc.backend)
		p := newPusher(t, f, 8, func(c *Config) { c.Endpoint.Auth, c.Endpoint.Tenant = tc.auth, tc.tenant })
		p.Push(hits(sample("a", 1, 5, "main", "f"), sample("b", 1, 2, "main", "g")), t0, t0.Add(time.Second))
		st := p.Close(5 * time.Second)
		got := f.received()
		if len(got) != 2 || st.Sent().Profiles != 2 || st.Dropped().Profiles != 0 {
			t.Fatalf("%s: %d received, stats %+v", tc.backend, len(got), st)
		}
		for i, r := range got {
			want := map[string]string{"__name__": "probee_hits", "service_name": "app", "hostname": "h1",
				"env": "prod", "probe": []string{"a", "b"}[i]}
			if tc.backend == Pyroscope {
				want["__delta__"] = "false"
			}
			if !equalMaps(r.labels, want) {
				t.Errorf("%s: labels %v, want %v", tc.backend, r.labels, want)
			}
			if h := r.header.Get("Authorization"); h != tc.header {
				t.Errorf("%s: Authorization %q, want %q", tc.backend, h, tc.header)
			}
			if h := r.header.Get("X-Scope-OrgID"); h != tc.tenant {
				t.Errorf("%s: X-Scope-OrgID %q, want %q", tc.backend, h, tc.tenant)
			}
			if r.prof.TimeNanos != t0.UnixNano() || r.prof.DurationNanos != int64(time.Second) {
				t.Errorf("%s: time %d+%d, want %d+1s", tc.backend, r.prof.TimeNanos, r.prof.DurationNanos, t0.UnixNano())
			}
		}
		if a, b := f.total("a"), f.total("b"); a != 5 || b != 2 {
			t.Errorf("%s: totals a=%d b=%d, want 5 and 2", tc.backend, a, b)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A second push sends only what is new; a probe without new counts sends nothing.
func TestPushDelta(t *testing.T) {
	f := newFake(t, Pyroscope)
	p := newPusher(t, f, 8, nil)
	p.Push(hits(sample("a", 1, 5, "main", "f"), sample("b", 1, 2, "main", "g")), t0, t0.Add(time.Second))
	p.Push(hits(sample("a", 1, 12, "main", "f"), sample("b", 1, 2, "main", "g")), t0.Add(time.Second), t0.Add(2*time.Second))
	st := p.Close(5 * time.Second)
	got := f.received()
	if len(got) != 3 || got[2].labels[LabelProbe] != "a" || got[2].prof.Sample[0].Value[0] != 7 {
		t.Fatalf("received %d profiles, the last %v; want 3, the last a's with 7 hits", len(got), got[len(got)-1].prof)
	}
	if st.Probes["a"].Sent != (Tally{2, 12}) || st.Probes["b"].Sent != (Tally{1, 2}) {
		t.Errorf("stats a %+v b %+v", st.Probes["a"].Sent, st.Probes["b"].Sent)
	}
}

// pushN pushes n intervals of probe "a" with i+1 new hits in the i-th,
// and returns the hits pushed.
func pushN(p *Pusher, n int, from uint64) (cum, total uint64) {
	cum = from
	for i := range n {
		cum += uint64(i + 1)
		total += uint64(i + 1)
		p.Push(hits(sample("a", 1, cum, "main", "f")), t0, t0)
	}
	return cum, total
}

// While the backend fails, at most Queue profiles wait beside the one
// being retried; the oldest waiting ones are dropped and counted, and sent
// plus dropped events add up to what was pushed.
func TestPushQueueBound(t *testing.T) {
	down := make(chan struct{})
	f := newFake(t, Parca)
	f.fail = func(int) int {
		select {
		case <-down:
			return 0
		default:
			return 503
		}
	}
	p := newPusher(t, f, 2, nil)
	cum, total := pushN(p, 1, 0)
	waitFor(t, func() bool { return len(f.attemptTimes()) > 0 })
	_, more := pushN(p, 5, cum) // 1, 2, 3, 4, 5 new hits: 1, 2, 3 dropped
	total += more
	close(down)
	st := p.Close(5 * time.Second)
	a := st.Probes["a"]
	if a.Sent != (Tally{3, 1 + 4 + 5}) || a.Dropped[DropQueueFull] != (Tally{3, 1 + 2 + 3}) {
		t.Errorf("sent %+v dropped %+v; want 3 profiles (10 hits) sent and 3 (6 hits) dropped", a.Sent, a.Dropped)
	}
	if got := st.Sent().Events + st.Dropped().Events; got != total || f.total("a") != a.Sent.Events {
		t.Errorf("sent+dropped %d, pushed %d, backend has %d", got, total, f.total("a"))
	}
	if st.Retries == 0 || st.LastErr == "" {
		t.Errorf("retries %d, last error %q", st.Retries, st.LastErr)
	}
}

func (f *fakeBackend) attemptTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.attempts...)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("timed out")
		}
	}
}

// Failed attempts are retried after Initial, 2*Initial, ... up to Max.
func TestPushBackoff(t *testing.T) {
	f := newFake(t, Pyroscope)
	f.fail = func(n int) int { return map[bool]int{true: 503}[n < 5] }
	var waits []time.Duration // only the sender goroutine appends
	p := newPusher(t, f, 4, func(c *Config) {
		c.Backoff = Backoff{Initial: 20 * time.Millisecond, Max: 80 * time.Millisecond}
		c.after = func(d time.Duration) <-chan time.Time {
			waits = append(waits, d)
			return time.After(0)
		}
	})
	pushN(p, 1, 0)
	st := p.Close(5 * time.Second)
	if n := len(f.attemptTimes()); n != 6 || st.Retries != 5 || st.Sent().Profiles != 1 {
		t.Fatalf("%d attempts, stats %+v; want 6 attempts, 5 retries, 1 sent", n, st)
	}
	ms := time.Millisecond
	if want := []time.Duration{20 * ms, 40 * ms, 80 * ms, 80 * ms, 80 * ms}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
}

// A 4xx answer (not 429) is final: dropped as rejected, not retried.
func TestPushRejected(t *testing.T) {
	for _, tc := range []struct {
		code     int
		attempts int
		reason   string
	}{
		{400, 1, DropRejected},
		{401, 1, DropRejected},
		{429, 2, ""},
		{500, 2, ""},
	} {
		f := newFake(t, Parca)
		f.fail = func(n int) int { return map[bool]int{true: tc.code}[n == 0] }
		p := newPusher(t, f, 4, nil)
		pushN(p, 1, 0)
		st := p.Close(5 * time.Second)
		if n := len(f.attemptTimes()); n != tc.attempts {
			t.Errorf("%d: %d attempts, want %d", tc.code, n, tc.attempts)
		}
		dropped := st.Probes["a"].Dropped[tc.reason]
		if tc.reason != "" && dropped != (Tally{1, 1}) || tc.reason == "" && st.Sent() != (Tally{1, 1}) {
			t.Errorf("%d: stats %+v %+v", tc.code, st.Probes["a"], st.LastErr)
		}
	}
}

// Close gives up after its timeout: what was not sent is counted as such.
func TestPushCloseTimeout(t *testing.T) {
	f := newFake(t, Pyroscope)
	f.fail = func(int) int { return 503 }
	p := newPusher(t, f, 8, nil)
	_, total := pushN(p, 3, 0)
	start := time.Now()
	st := p.Close(100 * time.Millisecond)
	if el := time.Since(start); el < 100*time.Millisecond || el > 2*time.Second {
		t.Errorf("Close took %v, want about 100ms", el)
	}
	if d := st.Probes["a"].Dropped[DropUnsent]; d != (Tally{3, total}) || st.Sent().Profiles != 0 {
		t.Errorf("stats %+v, want 3 profiles (%d hits) unsent", st.Probes["a"], total)
	}
}

// Close waits for every queued profile when the backend answers.
func TestPushCloseFlushes(t *testing.T) {
	f := newFake(t, Parca)
	p := newPusher(t, f, 100, nil)
	_, total := pushN(p, 20, 0)
	st := p.Close(10 * time.Second)
	if st.Sent() != (Tally{20, total}) || f.total("a") != total || st.Dropped().Profiles != 0 {
		t.Errorf("stats %+v, backend total %d; want all %d hits sent", st.Sent(), f.total("a"), total)
	}
}

func TestNewRejectsEmptyQueue(t *testing.T) {
	if _, err := New(Config{Queue: 0}); err == nil {
		t.Error("queue 0 accepted")
	}
}

// newSilent is a backend that takes requests and never answers, as a
// server that hangs while a system-wide run pushes every interval.
func newSilent(t *testing.T) *fakeBackend {
	f := &fakeBackend{t: t, backend: Pyroscope}
	gone := make(chan struct{})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.attempts = append(f.attempts, time.Now())
		f.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-gone:
		}
	}))
	t.Cleanup(func() { close(gone); f.srv.Close() })
	return f
}

// While the backend never answers, the profiles waiting take at most
// QueueBytes (the newest alone when it is larger): the oldest are dropped
// past it, counted as DropQueueBytes, whatever Queue allows.
func TestPushQueueBytes(t *testing.T) {
	one, err := encode(hits(sample("a", 1, 5, "main", "f")))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(one.body)) // each interval's profile: one stack, within a few bytes
	for _, tc := range []struct {
		name    string
		bytes   int64
		waiting int // of the 9 pushed after the one being sent
	}{
		{"3.5 profiles", size*7/2 + 1, 3},
		{"half a profile: the newest waits", size / 2, 1},
		{"default", 0, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSilent(t)
			p := newPusher(t, f, 100, func(c *Config) { c.QueueBytes = tc.bytes })
			cum, _ := pushN(p, 1, 0) // being sent, never answered
			waitFor(t, func() bool { return len(f.attemptTimes()) > 0 })
			pushN(p, 9, cum) // 1..9 new hits
			p.mu.Lock()
			var waiting, bytes, events int64
			for _, it := range p.queue {
				waiting, bytes, events = waiting+1, bytes+int64(len(it.body)), events+int64(it.events)
			}
			queued, limit := p.queued, p.cfg.QueueBytes
			dropped := p.stats.probe("a").Dropped[DropQueueBytes]
			p.mu.Unlock()
			if queued != bytes || waiting > 1 && bytes > limit {
				t.Errorf("%d profiles wait, %d bytes (counted %d); want at most %d bytes", waiting, bytes, queued, limit)
			}
			wantDropped := 9 - tc.waiting
			// the newest wait: 9, 8, ... new hits; the oldest were dropped
			wantEvents := (9*10 - (9-tc.waiting)*(10-tc.waiting)) / 2
			if waiting != int64(tc.waiting) || events != int64(wantEvents) || dropped.Profiles != wantDropped ||
				dropped.Events != uint64((9-tc.waiting)*(10-tc.waiting)/2) {
				t.Errorf("%d profiles wait (%d hits), %+v dropped; want the newest %d (%d hits) and %d dropped",
					waiting, events, dropped, tc.waiting, wantEvents, wantDropped)
			}
			st := p.Close(50 * time.Millisecond)
			if d := st.Probes["a"].Dropped; d[DropQueueBytes] != dropped || d[DropUnsent].Profiles != 1+tc.waiting || st.Sent().Profiles != 0 {
				t.Errorf("after Close: %+v, want %d unsent", d, 1+tc.waiting)
			}
		})
	}
}
