package resolver

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/probespec"
)

var fakeKernel = Scope{Tracefs: "testdata/tracefs", KprobeBlacklist: "testdata/kprobe_blacklist", Kallsyms: "testdata/kallsyms"}

func kspec(target probespec.Target, kind probespec.MatcherKind, pattern string) probespec.Spec {
	return probespec.Spec{Kind: probespec.Kprobe, Target: target, Matcher: probespec.Matcher{Kind: kind, Pattern: pattern}}
}

func lines(ts []AttachPoint) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

func TestKernelFunctionsFakeTracefs(t *testing.T) {
	mod := func(n string) probespec.Target { return probespec.Target{Kind: probespec.TargetModule, Name: n} }
	tests := []struct {
		spec probespec.Spec
		want []string
	}{
		{kspec(probespec.Target{}, probespec.MatchExact, "vfs_read"), []string{"kprobe:vfs_read"}},
		{kspec(probespec.Target{}, probespec.MatchGlob, "vfs_*"), []string{"kprobe:vfs_read", "kprobe:vfs_write"}}, // vfs_readv blacklisted
		{kspec(probespec.Target{}, probespec.MatchGlob, "*_read_iter"), []string{"kprobe:ext4:ext4_file_read_iter", "kprobe:xfs:xfs_file_read_iter"}},
		{kspec(mod("ext4"), probespec.MatchGlob, "ext4_file_*"), []string{"kprobe:ext4:ext4_file_open", "kprobe:ext4:ext4_file_read_iter"}},
		{kspec(mod("vmlinux"), probespec.MatchRegex, "read"), []string{"kprobe:vfs_read"}},
	}
	for _, tt := range tests {
		ts := resolveOK(t, tt.spec, fakeKernel)
		if got := lines(ts); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v = %v, want %v", tt.spec.Matcher, got, tt.want)
		}
	}
	ret := kspec(probespec.Target{}, probespec.MatchExact, "vfs_write")
	ret.Ret = true
	if got := lines(resolveOK(t, ret, fakeKernel)); !reflect.DeepEqual(got, []string{"kretprobe:vfs_write"}) {
		t.Errorf("kretprobe = %v", got)
	}
}

func TestKernelNoMatch(t *testing.T) {
	_, err := Resolve(kspec(probespec.Target{}, probespec.MatchExact, "vfs_raed"), fakeKernel)
	var nm *NoMatchError
	if !errors.As(err, &nm) || len(nm.Suggestions) == 0 || nm.Suggestions[0] != "vfs_read" {
		t.Errorf("err = %v", err)
	}
	_, err = Resolve(kspec(probespec.Target{}, probespec.MatchExact, "notrace_me_not"), fakeKernel)
	if err == nil || !strings.Contains(err.Error(), "blacklist") {
		t.Errorf("blacklisted: %v", err)
	}
}

func TestKernelKallsymsFallback(t *testing.T) {
	scope := Scope{Tracefs: t.TempDir(), Kallsyms: "testdata/kallsyms"}
	ts := resolveOK(t, kspec(probespec.Target{}, probespec.MatchGlob, "*"), scope)
	want := []string{"kprobe:_stext", "kprobe:ext4:ext4_file_open", "kprobe:ext4:ext4_file_read_iter", "kprobe:vfs_read", "kprobe:vfs_write", "kprobe:weak_fn"}
	if got := lines(ts); !reflect.DeepEqual(got, want) {
		t.Errorf("kallsyms fallback = %v", got)
	}
}

func TestTracepointsFake(t *testing.T) {
	tp := func(c, n string) probespec.Spec {
		return probespec.Spec{Kind: probespec.Tracepoint, Tracepoint: probespec.TracepointName{Category: c, Name: n}}
	}
	tests := []struct {
		spec probespec.Spec
		want []string
	}{
		{tp("sched", "sched_switch"), []string{"tracepoint:sched:sched_switch"}},
		{tp("sched", "sched_*"), []string{"tracepoint:sched:sched_switch", "tracepoint:sched:sched_wakeup"}},
		{tp("syscalls", "sys_enter_open*"), []string{"tracepoint:syscalls:sys_enter_open", "tracepoint:syscalls:sys_enter_openat"}},
		{tp("*", "*openat"), []string{"tracepoint:syscalls:sys_enter_openat", "tracepoint:syscalls:sys_exit_openat"}},
	}
	for _, tt := range tests {
		if got := lines(resolveOK(t, tt.spec, fakeKernel)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v = %v, want %v", tt.spec.Tracepoint, got, tt.want)
		}
	}
	_, err := Resolve(tp("sched", "sched_swtch"), fakeKernel)
	var nm *NoMatchError
	if !errors.As(err, &nm) || len(nm.Suggestions) == 0 || nm.Suggestions[0] != "sched:sched_switch" {
		t.Errorf("no match: %v", err)
	}
	if _, err := Resolve(tp("sched", "x"), Scope{Root: t.TempDir()}); !errors.Is(err, ErrNoTracefs) {
		t.Errorf("no tracefs: %v", err)
	}
}
