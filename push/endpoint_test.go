package push

import (
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		url, backend string
		want         Backend
		wantURL      string
		err          string // substring; "" for success
	}{
		{"pyroscope://127.0.0.1:4040", "", Pyroscope, "http://127.0.0.1:4040", ""},
		{"parca://localhost:7070/", "", Parca, "http://localhost:7070", ""},
		{"pyroscope+https://profiles.example.com/p/", "", Pyroscope, "https://profiles.example.com/p", ""},
		{"PARCA+HTTPS://h", "", Parca, "https://h", ""},
		{"http://127.0.0.1:4040", "pyroscope", Pyroscope, "http://127.0.0.1:4040", ""},
		{"https://h:7070", "parca", Parca, "https://h:7070", ""},
		{"parca://h", "parca", Parca, "http://h", ""},
		{"http://127.0.0.1:4040", "", "", "", "say which backend"},
		{"pyroscope://h", "parca", "", "", "drop one"},
		{"http://h", "jaeger", "", "", "want pyroscope or parca"},
		{"ftp://h", "", "", "", "unknown scheme"},
		{"pyroscope+http://h", "", "", "", "unknown scheme"},
		{"http+https://h", "parca", "", "", "unknown scheme"},
		{"127.0.0.1:4040", "pyroscope", "", "", "push url"},
		{"pyroscope://", "", "", "", "want SCHEME://HOST"},
		{"pyroscope://u:p@h", "", "", "", "without user"},
		{"pyroscope://h?x=1", "", "", "", "without user, query"},
		{"pyroscope://h#f", "", "", "", "fragment"},
		{"pyroscope:h", "", "", "", "want SCHEME://HOST"},
		{"%zz", "", "", "", "push url"},
	} {
		got, err := ParseEndpoint(tc.url, tc.backend)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseEndpoint(%q, %q) = %v, %v; want error with %q", tc.url, tc.backend, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.Backend != tc.want || got.URL.String() != tc.wantURL {
			t.Errorf("ParseEndpoint(%q, %q) = %v %v, %v; want %s %s", tc.url, tc.backend, got.Backend, got.URL, err, tc.want, tc.wantURL)
		}
	}
}

func TestParseBasicAuth(t *testing.T) {
	for _, tc := range []struct {
		in, user, pass string
		ok             bool
	}{
		{"u:p", "u", "p", true},
		{"u:p:q", "u", "p:q", true},
		{"u:", "u", "", true},
		{"u", "", "", false},
		{":p", "", "", false},
		{"", "", "", false},
	} {
		a, err := ParseBasicAuth(tc.in)
		if (err == nil) != tc.ok || a.User != tc.user || a.Password != tc.pass {
			t.Errorf("ParseBasicAuth(%q) = %+v, %v", tc.in, a, err)
		}
	}
}

func TestAuthHeader(t *testing.T) {
	for _, tc := range []struct {
		a    Auth
		want string
	}{
		{Auth{}, ""},
		{Auth{User: "u", Password: "p"}, "Basic dTpw"},
		{Auth{Token: "t0k"}, "Bearer t0k"},
	} {
		if got := tc.a.header(); got != tc.want {
			t.Errorf("%+v.header() = %q, want %q", tc.a, got, tc.want)
		}
	}
}

func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"pyroscope://h:4040", "parca+https://h/p", "http://h", "%", "pyroscope://u@h?q#f"} {
		f.Add(s, "")
		f.Add(s, "parca")
	}
	f.Fuzz(func(t *testing.T, raw, backend string) {
		tg, err := ParseEndpoint(raw, backend)
		if err != nil {
			return
		}
		if tg.Backend != Pyroscope && tg.Backend != Parca {
			t.Fatalf("ParseEndpoint(%q, %q): backend %q", raw, backend, tg.Backend)
		}
		if s := tg.URL.Scheme; s != "http" && s != "https" || tg.URL.Host == "" {
			t.Fatalf("ParseEndpoint(%q, %q): url %v", raw, backend, tg.URL)
		}
	})
}

func FuzzParseBasicAuth(f *testing.F) {
	for _, s := range []string{"u:p", "u:p:q", ":", "u", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseBasicAuth(s)
		if err != nil {
			return
		}
		if a.User == "" || strings.Contains(a.User, ":") || a.User+":"+a.Password != s {
			t.Fatalf("ParseBasicAuth(%q) = %+v", s, a)
		}
	})
}
