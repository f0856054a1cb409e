package probespec

import (
	"strings"
	"testing"
)

var parseCases = []struct {
	in    string
	want  Spec
	canon string
}{
	// "::" versus the library separator.
	{"libfoo:ns::Klass::method", up(MatchDemangled, "ns::Klass::method", lib("libfoo")), "uprobe:libfoo:ns::Klass::method"},
	{"libc:::foo", up(MatchDemangled, "::foo", lib("libc")), "uprobe:libc:::foo"},
	{"::foo", up(MatchDemangled, "::foo"), "uprobe:::foo"},
	{"uprobe:::foo", up(MatchDemangled, "::foo"), ""},
	{"regex::Regex::new", up(MatchDemangled, "regex::Regex::new"), "uprobe:regex::Regex::new"},
	{"ret::x", up(MatchDemangled, "ret::x"), ""},
	{"tracepoint::x", up(MatchDemangled, "tracepoint::x"), ""},
	{"std::vector<int>::push_back", up(MatchDemangled, "std::vector<int>::push_back"), ""},
	// Paths holding colons, spaces, "::".
	{"/opt/a:b/app:malloc", up(MatchExact, "malloc", path("/opt/a:b/app")), "uprobe:/opt/a:b/app:malloc"},
	{"/opt/x::y/app:malloc", up(MatchExact, "malloc", path("/opt/x::y/app")), ""},
	{"/opt/My App/app:main", up(MatchExact, "main", path("/opt/My App/app")), ""},
	{"../lib/libx.so:foo", up(MatchExact, "foo", path("../lib/libx.so")), ""},
	{"/opt/a:regex:x", up(MatchRegex, "x", path("/opt/a")), ""},
	{"/abs/src/x.c:7", src("/abs/src/x.c", 7), "uprobe:/abs/src/x.c:7"},
	{"./src/main.c:42", src("./src/main.c", 42), ""},
	{"./app:/x.c:5", src("/x.c", 5, path("./app")), ""},
	// Regexes: slash form, colons, offsets.
	{"/a:b/", up(MatchRegex, "a:b"), "uprobe:regex:a:b"},
	{"./app:/a:b/", up(MatchRegex, "a:b", path("./app")), ""},
	{"/a/b/+0x10", up(MatchRegex, "a/b", off(16)), "uprobe:/a/b/+0x10"},
	{"./app:/^h/+16", up(MatchRegex, "^h", path("./app"), off(16)), "uprobe:./app:/^h/+0x10"},
	{"regex:foo+0x10", up(MatchRegex, "foo+0x10"), "uprobe:regex:foo+0x10"},
	{"re:^x", up(MatchRegex, "^x"), "uprobe:regex:^x"},
	{"regex:a b", up(MatchRegex, "a b"), ""},
	{"regex::x", up(MatchDemangled, "regex::x"), ""},
	{"/:x/", up(MatchRegex, ":x"), "uprobe:/:x/"},
	// operator+ and friends.
	{"operator+", up(MatchExact, "operator+"), "uprobe:operator+"},
	{"ns::Vec::operator+=", up(MatchDemangled, "ns::Vec::operator+="), ""},
	{"ns::It::operator++", up(MatchDemangled, "ns::It::operator++"), ""},
	{"ns::It::operator++0x10", up(MatchDemangled, "ns::It::operator+", off(16)), "uprobe:ns::It::operator++0x10"},
	{"operator+0+0", up(MatchExact, "operator+0"), "uprobe:operator+0+0x0"}, // found by FuzzParse
	{"demangle:ns::operator+(A const&, A const&)", up(MatchDemangled, "ns::operator+(A const&, A const&)"), "uprobe:ns::operator+(A const&, A const&)"},
	{"demangle:f[abi:cxx11]()", up(MatchDemangled, "f[abi:cxx11]()"), "uprobe:demangle:f[abi:cxx11]()"},
	{"demangle:foo()::{lambda(int)#1}::operator()", up(MatchDemangled, "foo()::{lambda(int)#1}::operator()"), ""},
	// Kinds and keywords in any case.
	{"UPROBE:malloc", up(MatchExact, "malloc"), "uprobe:malloc"},
	{"URETPROBE:free", up(MatchExact, "free", ret), "uretprobe:free"},
	{"Kprobe:vfs_read", kp(MatchExact, "vfs_read"), ""},
	{"KR:tcp_sendmsg", kp(MatchExact, "tcp_sendmsg", ret), "kretprobe:tcp_sendmsg"},
	{"TP:sched:sched_switch", tp("sched", "sched_switch"), "tracepoint:sched:sched_switch"},
	{"RET:malloc", up(MatchExact, "malloc", ret), "uretprobe:malloc"},
	{"REGEX:^x", up(MatchRegex, "^x"), "uprobe:regex:^x"},
	{"Glob:a*", up(MatchGlob, "a*"), "uprobe:a*"},
	{"EXACT:foo", up(MatchExact, "foo"), "uprobe:foo"},
	{"u:malloc", up(MatchExact, "malloc"), ""},
	{"k:vfs_read", kp(MatchExact, "vfs_read"), ""},
	{"t:sched:x", tp("sched", "x"), ""},
	{"tp:syscalls:sys_enter_open*", tp("syscalls", "sys_enter_open*"), ""},
	{"tracepoint:syscalls:sys_enter_{open,openat}", tp("syscalls", "sys_enter_{open,openat}"), ""},
	{"uprobe:ret:malloc", up(MatchExact, "malloc", ret), "uretprobe:malloc"},
	{"kprobe:ret:vfs_read", kp(MatchExact, "vfs_read", ret), "kretprobe:vfs_read"},
	// Go, Rust, C++ symbols.
	{"net/http.(*conn).serve", up(MatchDemangled, "net/http.(*conn).serve"), ""},
	{"./app:main.main", up(MatchExact, "main.main", path("./app")), ""},
	{"runtime.gcBgMarkWorker.func1", up(MatchExact, "runtime.gcBgMarkWorker.func1"), ""},
	{"std::io::Write::write_all", up(MatchDemangled, "std::io::Write::write_all"), ""},
	{"<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop", up(MatchDemangled, "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"), ""},
	{"_ZN4core3ptr13drop_in_place17h0123456789abcdefE", up(MatchExact, "_ZN4core3ptr13drop_in_place17h0123456789abcdefE"), ""},
	{"_RNvCs1234_7mycrate4main", up(MatchExact, "_RNvCs1234_7mycrate4main"), ""},
	{"libstdc++:std::__cxx11::basic_string*", up(MatchDemangled, "std::__cxx11::basic_string*", lib("libstdc++")), ""},
	{"libstdc++.so.6:_Znwm", up(MatchExact, "_Znwm", lib("libstdc++.so.6")), ""},
	{"föö", up(MatchExact, "föö"), ""},
	// Libraries, offsets.
	{"c:malloc", up(MatchExact, "malloc", lib("c")), ""},
	{"libc.so.6:malloc+100", up(MatchExact, "malloc", lib("libc.so.6"), off(100)), "uprobe:libc.so.6:malloc+0x64"},
	{"malloc+0", up(MatchExact, "malloc"), "uprobe:malloc"},
	{"malloc+0X1F", up(MatchExact, "malloc", off(31)), "uprobe:malloc+0x1f"},
	{"malloc+010", up(MatchExact, "malloc", off(10)), ""},
	{"malloc+18446744073709551615", up(MatchExact, "malloc", off(1<<64-1)), "uprobe:malloc+0xffffffffffffffff"},
	{"glob:malloc+0x10", up(MatchGlob, "malloc", off(16)), "uprobe:glob:malloc+0x10"},
	{"exact:42", up(MatchExact, "42"), "uprobe:exact:42"},
	{"exact:a:b", up(MatchExact, "a:b"), "uprobe:exact:a:b"},
	{"exact:malloc*", up(MatchExact, "malloc*"), "uprobe:exact:malloc*"},
	{"glob:ns::f", up(MatchGlob, "ns::f"), "uprobe:glob:ns::f"},
	{"__libc_malloc", up(MatchExact, "__libc_malloc"), ""},
	{"malloc.cold", up(MatchExact, "malloc.cold"), ""},
	// Source files.
	{"main.rs:10", src("main.rs", 10), ""},
	{"lib.go:5", src("lib.go", 5), ""},
	{"start.S:1", src("start.S", 1), ""},
	{"a.zig:3", src("a.zig", 3), ""},
	{"src/foo.cpp:100", src("src/foo.cpp", 100), ""},
	{"libc:main.c:42", src("main.c", 42, lib("libc")), ""},
	// Kernel.
	{"kprobe:ext4:ext4_file_*", kp(MatchGlob, "ext4_file_*", module("ext4")), "kprobe:ext4:ext4_file_*"},
	{"kprobe:vmlinux:vfs_read", kp(MatchExact, "vfs_read", module("vmlinux")), ""},
	{"kprobe:/^vfs_(read|write)$/", kp(MatchRegex, "^vfs_(read|write)$"), "kprobe:regex:^vfs_(read|write)$"},
	{"kprobe:/a:b/", kp(MatchRegex, "a:b"), ""},
	{"kretprobe:vfs_read+0x4", kp(MatchExact, "vfs_read", ret, off(4)), ""},
	{"kprobe:foo.isra.0", kp(MatchExact, "foo.isra.0"), ""},
	{"tracepoint:sched:sched_*", tp("sched", "sched_*"), ""},
	{"USDT:gc*", usdt("", "gc*"), "usdt:gc*"},
	{"usdt:fx:gated", usdt("fx", "gated"), ""},
	{"usdt:./app:fx:{plain,multi}", usdt("fx", "{plain,multi}", path("./app")), ""},
	{"usdt:./app:multi", usdt("", "multi", path("./app")), ""},
	{"usdt:/opt/a:b/app:fx:p", usdt("fx", "p", path("/opt/a:b/app")), ""},
	{"usdt:/opt/a:b/app:p", usdt("", "p", path("/opt/a:b/app")), ""},
	{"usdt:/a:b:c", usdt("b", "c", path("/a")), ""},
	{"usdt:/a:b/c:d:e", usdt("d", "e", path("/a:b/c")), ""},
	{"usdt:libusdtfx.so:fxlib:lib_gated", usdt("fxlib", "lib_gated", lib("libusdtfx.so")), ""},
	{"usdt:ret", usdt("", "ret"), ""},
	{"usdt:/x::b", usdt("", "b", path("/x:")), ""},
	{"usdt::x", up(MatchDemangled, "usdt::x"), ""}, // "::" belongs to a name: no kind
	{"usdt:usdt:usdt", usdt("usdt", "usdt"), ""},
	{"usdt:hotspot:method-entry.1", usdt("hotspot", "method-entry.1"), ""},
}

// TestParse covers edge cases beyond the conformance table. canon, when set,
// is the expected String().
func TestParse(t *testing.T) {
	for _, tt := range parseCases {
		got, err := Parse(Uprobe, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(Uprobe, %q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			continue
		}
		if tt.canon != "" && got.String() != tt.canon {
			t.Errorf("Parse(Uprobe, %q).String() = %q, want %q", tt.in, got.String(), tt.canon)
		}
		checkRoundTrip(t, tt.in, got)
	}
}

// TestFlagKinds checks the kind given by a flag and how explicit kinds
// combine with it.
func TestFlagKinds(t *testing.T) {
	tests := []struct {
		flag Kind
		in   string
		want Spec
	}{
		{Uprobe, "uretprobe:free", up(MatchExact, "free", ret)},
		{Uprobe, "u:malloc", up(MatchExact, "malloc")},
		{Kprobe, "vfs_read", kp(MatchExact, "vfs_read")},
		{Kprobe, "kretprobe:vfs_read", kp(MatchExact, "vfs_read", ret)},
		{Kprobe, "ret:vfs_read", kp(MatchExact, "vfs_read", ret)},
		{Kprobe, "ext4:ext4_file_*", kp(MatchGlob, "ext4_file_*", module("ext4"))},
		{Tracepoint, "sched:sched_switch", tp("sched", "sched_switch")},
		{Tracepoint, "tp:sched:sched_switch", tp("sched", "sched_switch")},
		{USDT, "fx:plain", usdt("fx", "plain")},
		{USDT, "usdt:./app:fx:plain", usdt("fx", "plain", path("./app"))},
	}
	for _, tt := range tests {
		got, err := ParseFlag(tt.flag, tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseFlag(%v, %q) = %#v, %v; want %#v", tt.flag, tt.in, got, err, tt.want)
		}
		checkRoundTrip(t, tt.in, got)
	}
	// Parse is permissive: the explicit kind wins over the default.
	if got, err := Parse(Kprobe, "uprobe:malloc"); err != nil || got != up(MatchExact, "malloc") {
		t.Errorf("Parse(Kprobe, uprobe:malloc) = %#v, %v", got, err)
	}
	if got, err := Parse(Tracepoint, "sched:x"); err != nil || got != tp("sched", "x") {
		t.Errorf("Parse(Tracepoint, sched:x) = %#v, %v", got, err)
	}
}

func TestLongInputs(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	checkError(t, Uprobe, big, 1, "spec too long")
	checkError(t, Uprobe, "regex:"+big, 1, "spec too long")
	// The limit counts the canonical form, with its kind prefix.
	checkError(t, Uprobe, strings.Repeat("a", MaxLen), 1, "spec too long")
	// Just under the limit still parses.
	name := strings.Repeat("a", MaxLen-len("uprobe:"))
	if s, err := Parse(Uprobe, name); err != nil || s.Matcher.Pattern != name {
		t.Errorf("Parse(%d bytes): %v", len(name), err)
	}
	// Worst case for the path rule: many separators, each tried.
	colons := "/" + strings.Repeat("a:", (MaxLen-16)/2) + "x"
	if _, err := Parse(Uprobe, colons); err != nil {
		t.Errorf("Parse(many colons): %v", err)
	}
	if s, err := Parse(Uprobe, "usdt:"+colons); err != nil || s.USDT != (USDTName{"a", "x"}) {
		t.Errorf("Parse(usdt: many colons) = %#v, %v", s.USDT, err)
	}
}

func TestString(t *testing.T) {
	if got := (Spec{}).String(); got != "<invalid spec>" {
		t.Errorf("Spec{}.String() = %q", got)
	}
}
