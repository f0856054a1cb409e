package probespec

import (
	"errors"
	"testing"
)

var conformanceCases = []struct {
	in   string
	want Spec
}{
	{"malloc", up(MatchExact, "malloc")},
	{"libc:malloc*", up(MatchGlob, "malloc*", lib("libc"))},
	{"regex:^foo", up(MatchRegex, "^foo")},
	{"libc:regex:^mem(cpy|set)$", up(MatchRegex, "^mem(cpy|set)$", lib("libc"))},
	{"/usr/lib/x86_64-linux-gnu/libc.so.6:malloc", up(MatchExact, "malloc", path("/usr/lib/x86_64-linux-gnu/libc.so.6"))},
	{"ret:libc:malloc+0x10", up(MatchExact, "malloc", ret, lib("libc"), off(16))},
	{"uretprobe:free", up(MatchExact, "free", ret)},
	{"./app:/^handle_.*/", up(MatchRegex, "^handle_.*", path("./app"))},
	{"ns::Klass::method", up(MatchDemangled, "ns::Klass::method")},
	{"./app:demangle:std::vector<*>::push_back*", up(MatchDemangled, "std::vector<*>::push_back*", path("./app"))},
	{"main.c:42", src("main.c", 42)},
	{"./app:src/main.c:42", src("src/main.c", 42, path("./app"))},
	{"kprobe:vfs_read", kp(MatchExact, "vfs_read")},
	{"kprobe:vfs_*", kp(MatchGlob, "vfs_*")},
	{"kretprobe:tcp_sendmsg", kp(MatchExact, "tcp_sendmsg", ret)},
	{"tracepoint:sched:sched_switch", tp("sched", "sched_switch")},
	{"usdt:/usr/bin/python3.11:python:function__entry", usdt("python", "function__entry", path("/usr/bin/python3.11"))},
	{"usdt:/usr/bin/python3.11:*", usdt("", "*", path("/usr/bin/python3.11"))},
	{"usdt:libjvm:hotspot:gc__*", usdt("hotspot", "gc__*", lib("libjvm"))},
	{"usdt:python:function__entry", usdt("python", "function__entry")},
}

// TestConformance checks every row and error example of
// docs/spec-language.md#conformance-examples (tests/doccheck checks that the
// document's tables parse as they say).
// The table says "with --uprobe" but holds kprobe and tracepoint rows: those
// are checked as -e gives them (Parse(Uprobe, ...), the explicit kind wins)
// and with their own flag (ParseFlag(kind, ...)); --uprobe 'kprobe:...' is a
// contradiction, tested in TestFlagKinds.
func TestConformance(t *testing.T) {
	for _, tt := range conformanceCases {
		got, err := Parse(Uprobe, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(Uprobe, %q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			continue
		}
		if flag, err := ParseFlag(tt.want.Kind, tt.in); err != nil || flag != tt.want {
			t.Errorf("ParseFlag(%v, %q) = %#v, %v; want %#v", tt.want.Kind, tt.in, flag, err, tt.want)
		}
		checkRoundTrip(t, tt.in, got)
	}
}

func TestConformanceErrors(t *testing.T) {
	tests := []struct {
		in  string
		pos int
		msg string
	}{
		{"", 1, "empty spec"},
		{"malloc+", 8, "missing offset after '+'"},
		{"malloc+0xZZ", 8, `invalid offset "0xZZ"`},
		{"regex:(", 7, `invalid regex "(": missing closing )`},
		{"main.c:0", 8, `invalid line "0"`},
		{"kprobe:main.c:42", 8, "unexpected source location in a kprobe"},
		{"tracepoint:sched", 17, "missing tracepoint name"},
		{"ur:ret:malloc", 4, `ret: repeats the return probe already asked by "ur"`},
		{"glob:[", 7, `invalid glob "[": unexpected end of input`},
		{"usdt:./app", 11, `missing probe name after path "./app"`},
		{"usdt:a:b:c:d", 11, "too many parts: a usdt spec has at most TARGET, PROVIDER and NAME"},
	}
	for _, tt := range tests {
		checkError(t, Uprobe, tt.in, tt.pos, tt.msg)
	}
	// The example of issue 2, verbatim.
	_, err := ParseFlag(Uprobe, "malloc+0xZZ")
	if got, want := err.Error(), `1:8: invalid offset "0xZZ": want decimal or 0x-hex`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

// checkError parses in (Parse, and ParseFlag unless the kind prefix
// contradicts) and checks the error's column and message.
func checkError(t *testing.T, kind Kind, in string, pos int, msg string) {
	t.Helper()
	s, err := Parse(kind, in)
	if err == nil {
		t.Errorf("Parse(%v, %q) = %#v, want error %q", kind, in, s, msg)
		return
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Errorf("Parse(%v, %q): error %T is not *Error", kind, in, err)
		return
	}
	if pe.Pos != pos || pe.Msg != msg || pe.Input != in {
		t.Errorf("Parse(%v, %q) error = %d %q, want %d %q", kind, in, pe.Pos, pe.Msg, pos, msg)
	}
	if s != (Spec{}) {
		t.Errorf("Parse(%v, %q) returned a value with its error", kind, in)
	}
}

// checkRoundTrip checks that the canonical form of s parses back to s and
// is stable.
func checkRoundTrip(t *testing.T, in string, s Spec) {
	t.Helper()
	c := s.String()
	back, err := Parse(Uprobe, c)
	if err != nil {
		t.Errorf("%q: String() = %q does not parse: %v", in, c, err)
		return
	}
	if back != s {
		t.Errorf("%q: String() = %q parses to %#v, want %#v", in, c, back, s)
	}
	if c2 := back.String(); c2 != c {
		t.Errorf("%q: String() not stable: %q then %q", in, c, c2)
	}
}
