package push

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"google.golang.org/protobuf/encoding/protowire"
)

// received is one profile a fake backend accepted.
type received struct {
	labels map[string]string
	header http.Header
	prof   *profile.Profile
}

// fakeBackend is an httptest server speaking Pyroscope's push or Parca's
// writeraw. fail answers the next requests with a status (0: accept).
type fakeBackend struct {
	t        *testing.T
	srv      *httptest.Server
	backend  Backend
	mu       sync.Mutex
	got      []received
	attempts []time.Time
	fail     func(n int) int // status for the n-th request (from 0); nil: accept all
}

func newFake(t *testing.T, be Backend) *fakeBackend {
	f := &fakeBackend{t: t, backend: be}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeBackend) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := len(f.attempts)
	f.attempts = append(f.attempts, time.Now())
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		if code := fail(n); code != 0 {
			http.Error(w, "fake failure", code)
			return
		}
	}
	body, _ := io.ReadAll(r.Body)
	rec, err := f.decode(r.URL.Path, body)
	if err != nil {
		f.t.Errorf("fake %s: %v", f.backend, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec.header = r.Header.Clone()
	f.mu.Lock()
	f.got = append(f.got, rec)
	f.mu.Unlock()
}

func (f *fakeBackend) decode(path string, body []byte) (received, error) {
	if f.backend == Parca {
		if path != ParcaWritePath {
			return received{}, fmt.Errorf("path %s", path)
		}
		return decodeParca(body)
	}
	if path != PyroscopePushPath {
		return received{}, fmt.Errorf("path %s", path)
	}
	return decodePyroscope(body)
}

func decodeParca(body []byte) (received, error) {
	var req parcaWriteRaw
	if err := json.Unmarshal(body, &req); err != nil {
		return received{}, err
	}
	if len(req.Series) != 1 || len(req.Series[0].Samples) != 1 {
		return received{}, fmt.Errorf("want one series of one sample: %s", body)
	}
	rec := received{labels: map[string]string{}}
	for _, l := range req.Series[0].Labels.Labels {
		rec.labels[l.Name] = l.Value
	}
	var err error
	rec.prof, err = profile.Parse(bytes.NewReader(req.Series[0].Samples[0].RawProfile))
	return rec, err
}

// decodePyroscope reads a PushRequest of one series of one sample.
func decodePyroscope(b []byte) (received, error) {
	series, err := onlyField(b, pushRequestSeries)
	if err != nil {
		return received{}, err
	}
	rec := received{labels: map[string]string{}}
	var raw []byte
	err = eachField(series, func(num protowire.Number, v []byte) error {
		switch num {
		case seriesLabelsField:
			name, _ := onlyField(v, labelPairName)
			value, _ := onlyField(v, labelPairValue)
			rec.labels[string(name)] = string(value)
		case seriesSamples:
			raw, err = onlyField(v, rawSampleRawProfile)
		}
		return err
	})
	if err != nil {
		return rec, err
	}
	rec.prof, err = profile.Parse(bytes.NewReader(raw))
	return rec, err
}

func onlyField(b []byte, want protowire.Number) ([]byte, error) {
	var out []byte
	err := eachField(b, func(num protowire.Number, v []byte) error {
		if num == want {
			out = v
		}
		return nil
	})
	return out, err
}

func eachField(b []byte, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return fmt.Errorf("bad tag at %d", n)
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return fmt.Errorf("bad field %d", num)
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

func (f *fakeBackend) received() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

// total is the sum of the first sample value over every received profile of probe.
func (f *fakeBackend) total(probe string) uint64 {
	var n int64
	for _, r := range f.received() {
		if r.labels[LabelProbe] != probe {
			continue
		}
		for _, s := range r.prof.Sample {
			n += s.Value[0]
		}
	}
	return uint64(n)
}
