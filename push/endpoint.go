package push

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Backend is a kind of profiling server.
type Backend string

// The backends probee pushes to.
const (
	Pyroscope Backend = "pyroscope"
	Parca     Backend = "parca"
)

// Endpoint is where profiles go and how to authenticate there.
type Endpoint struct {
	Backend Backend
	URL     *url.URL // http or https, no query or fragment
	Auth    Auth
	Tenant  string // X-Scope-OrgID, "" for none
}

// Auth is one way to authenticate, or none.
type Auth struct {
	User, Password string // basic auth, when User is set
	Token          string // bearer token, when set
}

// ParseEndpoint parses a push URL and a backend name ("" to take it from the
// URL). The backend is the URL's scheme (pyroscope://HOST:4040,
// parca://HOST:7070, or pyroscope+https://, parca+https://) or, for an
// http(s) URL, the backend argument; both must agree when both are given.
func ParseEndpoint(raw, backend string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("push url %q: %w", raw, err)
	}
	be, scheme, ok := splitScheme(u.Scheme)
	if !ok {
		return Endpoint{}, fmt.Errorf("push url %q: unknown scheme %q: want http, https, pyroscope, parca, pyroscope+https or parca+https", raw, u.Scheme)
	}
	if be, err = pickBackend(raw, be, backend); err != nil {
		return Endpoint{}, err
	}
	if u.Host == "" || u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Endpoint{}, fmt.Errorf("push url %q: want SCHEME://HOST[:PORT][/PATH], without user, query or fragment (credentials go in --push-basic-auth or --push-token)", raw)
	}
	u.Scheme = scheme
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return Endpoint{Backend: be, URL: u}, nil
}

// splitScheme maps a URL scheme to the backend it names ("" for plain
// http and https) and the HTTP scheme to use.
func splitScheme(s string) (Backend, string, bool) {
	name, transport, tls := strings.Cut(strings.ToLower(s), "+")
	if tls && transport != "https" {
		return "", "", false
	}
	httpScheme := "http"
	if tls {
		httpScheme = "https"
	}
	switch name {
	case "http", "https":
		return "", name, !tls
	case string(Pyroscope), string(Parca):
		return Backend(name), httpScheme, true
	}
	return "", "", false
}

// pickBackend reconciles the URL's backend with the --push-backend value.
func pickBackend(raw string, fromURL Backend, flag string) (Backend, error) {
	switch flag {
	case "", string(Pyroscope), string(Parca):
	default:
		return "", fmt.Errorf("push backend %q: want pyroscope or parca", flag)
	}
	switch {
	case fromURL == "" && flag == "":
		return "", fmt.Errorf("push url %q: say which backend: --push-backend pyroscope|parca, or a pyroscope:// or parca:// URL", raw)
	case fromURL == "":
		return Backend(flag), nil
	case flag != "" && Backend(flag) != fromURL:
		return "", fmt.Errorf("push url %q names %s but --push-backend says %s: drop one", raw, fromURL, flag)
	}
	return fromURL, nil
}

// ParseBasicAuth parses "user:password" (the password may hold colons).
func ParseBasicAuth(s string) (Auth, error) {
	user, pass, ok := strings.Cut(s, ":")
	if !ok || user == "" {
		return Auth{}, errors.New("want USER:PASSWORD")
	}
	return Auth{User: user, Password: pass}, nil
}

// header is the Authorization header value, "" for none.
func (a Auth) header() string {
	switch {
	case a.Token != "":
		return "Bearer " + a.Token
	case a.User != "":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(a.User+":"+a.Password))
	}
	return ""
}
