package main

import (
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/push"
)

// Every bad --push flag is a usage error (exit 2) that names the flag.
func TestPushUsageErrors(t *testing.T) {
	t.Setenv(envBasicAuth, "")
	t.Setenv(envToken, "")
	base := []string{"--sample"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--push-interval", "5s"}, "--push-interval needs --push URL"},
		{[]string{"--label", "env=prod"}, "--label needs --push URL"},
		{[]string{"--service-name", "x"}, "--service-name needs --push URL"},
		{[]string{"--push-token", "t"}, "--push-token needs --push URL"},
		{[]string{"--push", "http://h:4040"}, "say which backend"},
		{[]string{"--push", "ftp://h"}, "unknown scheme"},
		{[]string{"--push", "pyroscope://h", "--push-backend", "parca"}, "drop one"},
		{[]string{"--push", "http://h", "--push-backend", "zipkin"}, "want pyroscope or parca"},
		{[]string{"--push", "pyroscope://u:p@h"}, "--push-basic-auth or --push-token"},
		{[]string{"--push", "pyroscope://h", "--push-interval", "10ms"}, "--push-interval 10ms: want a period of at least 100ms"},
		{[]string{"--push", "pyroscope://h", "--push-interval", "soon"}, `invalid value "soon" for --push-interval`},
		{[]string{"--push", "pyroscope://h", "--push-queue", "0"}, `invalid value "0" for --push-queue: want a number of profiles, at least 1`},
		{[]string{"--push", "pyroscope://h", "--push-queue", "x"}, `invalid value "x" for --push-queue`},
		{[]string{"--push", "pyroscope://h", "--push-queue-bytes", "0"}, `invalid value "0" for --push-queue-bytes: want a size such as 512M`},
		{[]string{"--push", "pyroscope://h", "--push-queue-bytes", "2048G"}, `invalid value "2048G" for --push-queue-bytes: more than 1024G`},
		{[]string{"--push-queue-bytes", "8M"}, "--push-queue-bytes needs --push URL"},
		{[]string{"--push", "pyroscope://h", "--push-flush-timeout", "0s"}, "--push-flush-timeout 0s: want a positive duration"},
		{[]string{"--push", "pyroscope://h", "--interval", "0"}, "--push needs periodic drains"},
		{[]string{"--push", "pyroscope://h", "--service-name", ""}, "--service-name: want a non-empty name"},
		{[]string{"--push", "pyroscope://h", "--label", "env"}, `invalid value "env" for --label: label "env": want NAME=VALUE`},
		{[]string{"--push", "pyroscope://h", "--label", "service_name=x"}, "--service-name"},
		{[]string{"--push", "pyroscope://h", "--label", "a=1", "--label", "a=2"}, "--label: label a given twice"},
		{[]string{"--push", "pyroscope://h", "--push-basic-auth", "nocolon"}, "--push-basic-auth (or PROBEE_PUSH_BASIC_AUTH): want USER:PASSWORD"},
		{[]string{"--push", "pyroscope://h", "--push-basic-auth", "u:p", "--push-token", "t"}, "give one"},
		{[]string{"--push"}, "--push needs a value"},
		{[]string{"--push", ""}, `invalid value "" for --push: want a server URL`},
	} {
		args := append(append([]string{}, base...), c.args...)
		out, errs, code := probee(t, args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("probee %q: exit %d, stderr %q; want exit 2 and %q", args, code, errs, c.want)
		}
	}
	if _, errs, code := probee(t, "-l", "libc:malloc", "--push", "parca://h"); code != 2 || !strings.Contains(errs, "--push only applies to tracing") {
		t.Errorf("--list-probes --push: exit %d, %q", code, errs)
	}
}

// Good push flags parse into the target, labels and credentials; the
// environment fills in what the flags leave out, and flags win.
func TestPushArgs(t *testing.T) {
	for _, c := range []struct {
		args     []string
		env      map[string]string
		backend  push.Backend
		url      string
		auth     push.Auth
		tenant   string
		labels   int
		interval time.Duration
		queue    int
		bytes    uint64 // --push-queue-bytes
	}{
		{[]string{"--push", "pyroscope://127.0.0.1:4040"}, nil, push.Pyroscope, "http://127.0.0.1:4040", push.Auth{}, "", 0, 15 * time.Second, 64, 64 << 20},
		{[]string{"--push", "https://h/x/", "--push-backend", "parca", "--push-interval", "1s", "--push-queue", "1", "--push-queue-bytes", "8M", "--label", "a=1", "--label", "b=2"},
			nil, push.Parca, "https://h/x", push.Auth{}, "", 2, time.Second, 1, 8 << 20},
		{[]string{"--push", "parca://h"}, map[string]string{envToken: "tok", envTenant: "org"}, push.Parca, "http://h", push.Auth{Token: "tok"}, "org", 0, 15 * time.Second, 64, 64 << 20},
		{[]string{"--push", "parca://h", "--push-tenant", "mine"}, map[string]string{envBasicAuth: "u:p:w", envTenant: "org"}, push.Parca, "http://h", push.Auth{User: "u", Password: "p:w"}, "mine", 0, 15 * time.Second, 64, 64 << 20},
		{[]string{"--push", "parca://h", "--push-basic-auth", "a:b"}, map[string]string{envBasicAuth: "u:p"}, push.Parca, "http://h", push.Auth{User: "a", Password: "b"}, "", 0, 15 * time.Second, 64, 64 << 20},
	} {
		for _, k := range []string{envBasicAuth, envToken, envTenant} {
			t.Setenv(k, c.env[k])
		}
		cfg, err := parseArgs(append([]string{"--sample"}, c.args...), nil)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		pa := cfg.push
		tg := pa.endpoint
		if tg.Backend != c.backend || tg.URL.String() != c.url || tg.Auth != c.auth || tg.Tenant != c.tenant ||
			len(pa.labels) != c.labels || pa.interval != c.interval || pa.queue != c.queue || pa.queueBytes != c.bytes {
			t.Errorf("%q: %+v %v, %+v", c.args, tg, tg.URL, pa)
		}
	}
}
