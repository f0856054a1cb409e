package main

import (
	"flag"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/probee/probee/push"
)

// Environment variables for credentials, so they stay out of ps and shell history.
const (
	envBasicAuth = "PROBEE_PUSH_BASIC_AUTH" // USER:PASSWORD, like --push-basic-auth
	envToken     = "PROBEE_PUSH_TOKEN"      // bearer token, like --push-token
	envTenant    = "PROBEE_PUSH_TENANT"     // X-Scope-OrgID, like --push-tenant
)

// pushArgs are the --push flags as given.
type pushArgs struct {
	url, backend  string
	interval      time.Duration // --push-interval (default 15s)
	queue         int           // --push-queue: profiles that may wait (default 64)
	queueBytes    uint64        // --push-queue-bytes: their encoded size (default 64 MiB)
	flushTimeout  time.Duration // --push-flush-timeout: the final flush's bound (default 10s)
	basicAuth     string
	token, tenant string
	serviceName   string
	labels        []push.Label
	given         []string      // the --push-* flags, --label and --service-name as typed
	endpoint      push.Endpoint // parsed by validatePush
}

func addPushFlags(fs *flag.FlagSet, pa *pushArgs) {
	pa.interval, pa.queue, pa.flushTimeout = 15*time.Second, 64, 10*time.Second
	pa.queueBytes = push.DefaultQueueBytes
	str := func(name string, dst *string) {
		fs.Func(name, "", func(s string) error { pa.given = append(pa.given, "--"+name); *dst = s; return nil })
	}
	str("push-backend", &pa.backend)
	str("push-basic-auth", &pa.basicAuth)
	str("push-token", &pa.token)
	str("push-tenant", &pa.tenant)
	str("service-name", &pa.serviceName)
	fs.Func("push", "", func(s string) error {
		if s == "" {
			return errWant("a server URL such as pyroscope://127.0.0.1:4040")
		}
		pa.url = s
		return nil
	})
	dur := func(name string, dst *time.Duration) {
		fs.Func(name, "", func(s string) error {
			pa.given = append(pa.given, "--"+name)
			d, err := time.ParseDuration(s)
			*dst = d
			return err
		})
	}
	dur("push-interval", &pa.interval)
	dur("push-flush-timeout", &pa.flushTimeout)
	fs.Func("push-queue", "", func(s string) error {
		pa.given = append(pa.given, "--push-queue")
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return errWant("a number of profiles, at least 1")
		}
		pa.queue = n
		return nil
	})
	fs.Func("push-queue-bytes", "", func(s string) error {
		pa.given = append(pa.given, "--push-queue-bytes")
		n, err := parseByteSize(s, 1<<40)
		pa.queueBytes = n
		return err
	})
	fs.Func("label", "", func(s string) error {
		pa.given = append(pa.given, "--label")
		l, err := push.ParseLabel(s)
		pa.labels = append(pa.labels, l)
		return err
	})
}

type errWant string

func (e errWant) Error() string { return "want " + string(e) }

// validatePush checks the push flags and fills in credentials from the
// environment.
func (cfg *config) validatePush() error {
	pa := &cfg.push
	if pa.url == "" {
		if len(pa.given) > 0 {
			return usagef("%s needs --push URL (see probee --help)", pa.given[0])
		}
		return nil
	}
	t, err := push.ParseEndpoint(pa.url, pa.backend)
	if err != nil {
		return usagef("--push: %v", err)
	}
	switch {
	case pa.interval < 100*time.Millisecond:
		return usagef("--push-interval %v: want a period of at least 100ms, such as 15s", pa.interval)
	case pa.flushTimeout <= 0:
		return usagef("--push-flush-timeout %v: want a positive duration, such as 10s", pa.flushTimeout)
	case cfg.interval == 0:
		return usagef("--interval 0 keeps every count in the kernel until the end: --push needs periodic drains (drop --interval 0)")
	case pa.serviceName == "" && slices.Contains(pa.given, "--service-name"):
		return usagef("--service-name: want a non-empty name")
	}
	if err := push.CheckLabels(pa.labels); err != nil {
		return usagef("--label: %v", err)
	}
	if t.Auth, err = pushAuth(pa); err != nil {
		return err
	}
	t.Tenant = orEnv(pa.tenant, envTenant)
	pa.endpoint = t
	return nil
}

// pushAuth takes basic auth or a token from the flags, else from the
// environment; not both.
func pushAuth(pa *pushArgs) (push.Auth, error) {
	basic, token := orEnv(pa.basicAuth, envBasicAuth), orEnv(pa.token, envToken)
	if basic != "" && token != "" {
		return push.Auth{}, usagef("basic auth and a bearer token both given (--push-basic-auth or %s, --push-token or %s): give one", envBasicAuth, envToken)
	}
	if token != "" {
		return push.Auth{Token: token}, nil
	}
	if basic == "" {
		return push.Auth{}, nil
	}
	a, err := push.ParseBasicAuth(basic)
	if err != nil {
		return a, usagef("--push-basic-auth (or %s): %v", envBasicAuth, err)
	}
	return a, nil
}

func orEnv(flagValue, env string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(env)
}
