package push

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// client sends one profile to a backend.
type client interface {
	send(ctx context.Context, it *item) error
}

// rejectedError is an answer that retrying cannot change (4xx but 429).
type rejectedError struct {
	status int
	body   string
}

func (e *rejectedError) Error() string {
	return fmt.Sprintf("rejected: %d %s: %s", e.status, http.StatusText(e.status), e.body)
}

func newClient(cfg Config) client {
	h := &httpClient{cfg: cfg}
	if cfg.Endpoint.Backend == Parca {
		return &parcaClient{h}
	}
	return &pyroscopeClient{h}
}

// httpClient posts request bodies with the endpoint's headers.
type httpClient struct{ cfg Config }

// post sends body to path under the endpoint's URL. A network error or a 429
// or 5xx answer is returned as is (retry); other non-2xx answers as a
// *rejectedError.
func (h *httpClient) post(ctx context.Context, path, contentType string, body []byte) error {
	t := h.cfg.Endpoint
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL.String()+path, bytes.NewReader(body))
	if err != nil {
		return &rejectedError{0, err.Error()}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "probee")
	if a := t.Auth.header(); a != "" {
		req.Header.Set("Authorization", a)
	}
	if t.Tenant != "" {
		req.Header.Set("X-Scope-OrgID", t.Tenant)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", t.Backend, t.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("%s %s: %s: %s", t.Backend, t.URL.Redacted(), resp.Status, strings.TrimSpace(string(msg)))
	}
	return &rejectedError{resp.StatusCode, strings.TrimSpace(string(msg))}
}
