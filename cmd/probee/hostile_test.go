package main

import (
	"strings"
	"testing"
)

// Hostile spec strings on every probe flag: a clear error naming the flag
// as it was given,
// exit 2, nothing on stdout, no panic. (A spec of 1 MB cannot be passed on
// a real command line: Linux caps one argument at 128 KiB; the e2e tests
// pass that.)
func TestHostileSpecs(t *testing.T) {
	specs := []struct {
		name, spec, want string
	}{
		{"1 MB", strings.Repeat("a", 1<<20), "spec too long"},
		{"1 MB of operators", strings.Repeat("operator+", 1<<17), "spec too long"},
		{"NUL byte", "mal\x00loc", "1:4:"},
		{"only NUL", "\x00", "1:1:"},
		{"invalid UTF-8", "mal\xffloc", "invalid UTF-8"},
		{"truncated UTF-8", "libc:ma\xc3", "invalid UTF-8"},
	}
	for _, flag := range []string{"--uprobe", "--kprobe", "--tracepoint", "-e", "--list-probes"} {
		for _, s := range specs {
			out, errs, code := probee(t, flag, s.spec)
			first := strings.SplitN(errs, "\n", 2)[0]
			if code != 2 || out != "" || !strings.HasPrefix(first, "probee: "+flag+" ") || !strings.Contains(errs, s.want) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %.200q; want exit 2 and %q", flag, s.name, code, out, errs, s.want)
			}
		}
	}
}
