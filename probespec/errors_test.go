package probespec

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/errors.golden")

type errCase struct {
	kind   Kind
	strict bool // ParseFlag rather than Parse
	in     string
	pos    int
	msg    string
}

var errCases = []errCase{
	// Input-level checks.
	{Uprobe, false, "  malloc", 1, "leading whitespace"},
	{Uprobe, false, "malloc ", 7, "trailing whitespace"},
	{Uprobe, false, "a\x00b", 2, `control character '\x00'`},
	{Uprobe, false, "mal\tloc", 4, `control character '\t'`},
	{Uprobe, false, "ab\xffc", 3, "invalid UTF-8"},
	{Uprobe, false, "föö\xc3", 4, "invalid UTF-8"},
	// Whitespace inside names.
	{Uprobe, false, "mal loc", 4, "unexpected whitespace"},
	{Uprobe, false, "uprobe: malloc", 8, "unexpected whitespace"},
	{Uprobe, false, "exact:a b", 8, "unexpected whitespace"},
	{Uprobe, false, "demangle: ns::f", 10, "unexpected whitespace"},
	{Uprobe, false, "/opt/x :malloc", 7, "path ends in whitespace"},
	{Uprobe, false, "main c.c:4", 5, "unexpected whitespace in source file"},
	// Missing parts.
	{Uprobe, false, "uprobe:", 8, "missing function"},
	{Uprobe, false, "libc:", 6, "missing function"},
	{Uprobe, false, "./app", 6, `missing function after path "./app"`},
	{Uprobe, false, "/usr/bin/app", 13, `missing function after path "/usr/bin/app"`},
	{Uprobe, false, "./app:", 7, "missing function"},
	{Uprobe, false, "regex:", 7, `empty pattern after "regex:"`},
	{Uprobe, false, "glob:", 6, `empty pattern after "glob:"`},
	{Uprobe, false, "main.c:", 8, "missing line number"},
	{Uprobe, false, "+16", 1, "missing function before '+'"},
	{Uprobe, false, "//", 1, "empty regex"},
	// Separators and names.
	{Uprobe, false, "ns::Klass:method", 1, `invalid library name "ns::Klass"`},
	{Uprobe, false, "libc:a:b", 7, "unexpected ':'"},
	{Uprobe, false, "uprob:libc:malloc", 1, `unknown probe kind "uprob"`},
	{Uprobe, false, "Uretprob:libc:malloc", 1, `unknown probe kind "Uretprob"`},
	{Uprobe, false, "kprbe:vfs:x", 1, `unknown probe kind "kprbe"`},
	{Uprobe, false, "bin/app:main", 1, `relative path "bin/app"`},
	{Uprobe, false, "f[abi:cxx11]()", 1, `invalid library name "f[abi"`},
	{Uprobe, false, "42", 1, `function name "42" is a number`},
	{Uprobe, false, "a/", 2, "unexpected '/' at the end of a name"},
	{Uprobe, false, "main.c:x", 8, `invalid line "x"`},
	{Uprobe, false, "main.c:42+4", 8, `invalid line "42+4"`},
	{Uprobe, false, "main.c:99999999999", 8, `line "99999999999" out of range`},
	// Offsets.
	{Uprobe, false, "malloc+0x10+4", 7, "unexpected '+' in name"},
	{Uprobe, false, "malloc+0x", 8, `invalid offset "0x"`},
	{Uprobe, false, "malloc+12abc", 8, `invalid offset "12abc"`},
	{Uprobe, false, "malloc+-1", 8, `invalid offset "-1"`},
	{Uprobe, false, "malloc+99999999999999999999", 8, `offset "99999999999999999999" out of range`},
	{Uprobe, false, "/x/+zz", 5, `invalid offset "zz"`},
	{Uprobe, false, "/usr/lib/libc.so.6:malloc+0xZZ", 27, `invalid offset "0xZZ"`},
	{Uprobe, false, "a+b::operator+", 2, "unexpected '+' in name"},
	{Uprobe, false, "xoperator+", 11, "missing offset after '+'"},
	// Patterns.
	{Uprobe, false, "libc:/re(/", 7, `invalid regex "re(": missing closing )`},
	{Uprobe, false, "glob:{a", 8, "invalid glob \"{a\": unclosed `{`"},
	{Uprobe, false, "demangle:ns::f[", 16, `invalid glob "ns::f[": unexpected end of input`},
	{Uprobe, false, "ns::f[x", 8, `invalid glob "ns::f[x": unexpected end of input`},
	{Uprobe, false, "a[", 3, `invalid glob "a[": unexpected end of input`},
	// ret.
	{Uprobe, false, "ret:ret:x", 5, "ret: given twice"},
	{Kprobe, false, "ret:RET:x", 5, "ret: given twice"},
	{Uprobe, false, "uretprobe:main.c:4", 1, "return probes attach to functions, not source lines"},
	{Uprobe, false, "ret:main.c:4", 1, "return probes attach to functions, not source lines"},
	{Uprobe, false, "kretprobe:ret:x", 11, `ret: repeats the return probe already asked by "kretprobe"`},
	// Kernel.
	{Uprobe, false, "kprobe:./x:foo", 8, "unexpected path in a kprobe"},
	{Uprobe, false, "kprobe:/usr/x:foo", 8, "unexpected path in a kprobe"},
	{Uprobe, false, "kprobe:ext.4:foo", 8, `invalid kernel module name "ext.4"`},
	{Uprobe, false, "kprobe:ext4:main.c:4", 13, "unexpected source location in a kprobe"},
	{Uprobe, false, "kprobe:", 8, "missing function"},
	{Kprobe, true, "", 1, "empty spec"},
	// Tracepoints.
	{Uprobe, false, "tracepoint:a:b:c", 15, `unexpected ':' in tracepoint`},
	{Uprobe, false, "tracepoint:::x", 12, "missing tracepoint category"},
	{Uprobe, false, "tracepoint:sched:", 18, "missing tracepoint name"},
	{Uprobe, false, "tracepoint:", 12, "missing tracepoint"},
	{Uprobe, false, "tracepoint:ret:x", 12, "unexpected ret: in a tracepoint"},
	{Uprobe, false, "tracepoint:sched:sched switch", 23, `unexpected ' ' in tracepoint`},
	{Uprobe, false, "tracepoint:sched:[", 19, `invalid glob "[": unexpected end of input`},
	{Tracepoint, true, "sched", 6, "missing tracepoint name"},
	// USDT.
	{Uprobe, false, "usdt:", 6, "missing probe name"},
	{Uprobe, false, "usdt:fx:", 9, "missing probe name"},
	{Uprobe, false, "usdt:fx::x", 9, "missing provider"},
	{Uprobe, false, "usdt:./app:", 12, "missing probe name"},
	{Uprobe, false, "usdt:./app:fx:", 15, "missing probe name"},
	{Uprobe, false, "usdt:/x/app", 12, `missing probe name after path "/x/app"`},
	{Uprobe, false, "usdt:ret:x", 6, "unexpected ret: in a USDT probe"},
	{Uprobe, false, "usdt:a:b:c:d", 11, "too many parts: a usdt spec has at most TARGET, PROVIDER and NAME"},
	{Uprobe, false, "usdt:x/y:p:n", 6, `relative path "x/y"`},
	{Uprobe, false, "usdt:li#b:p:n", 6, `invalid library name "li#b"`},
	{Uprobe, false, "usdt:fx:a b", 10, `unexpected ' ' in a USDT probe name`},
	{Uprobe, false, "usdt:f/x:n", 6, `relative path "f/x"`},
	{Uprobe, false, "usdt:f:x/y", 9, `unexpected '/' in a USDT probe name`},
	{Uprobe, false, "usdt:fx:[", 10, `invalid glob "[": unexpected end of input`},
	{Uprobe, false, "usdt:/x :fx:n", 8, "path ends in whitespace"},
	{USDT, true, "uprobe:malloc", 1, `kind "uprobe" contradicts --usdt`},
	{Uprobe, true, "usdt:fx:plain", 1, `kind "usdt" contradicts --uprobe`},
	// Kinds contradicting the flag.
	{Uprobe, true, "kprobe:vfs_read", 1, `kind "kprobe" contradicts --uprobe`},
	{Kprobe, true, "uretprobe:free", 1, `kind "uretprobe" contradicts --kprobe`},
	{Tracepoint, true, "u:malloc", 1, `kind "u" contradicts --tracepoint`},
	{Kind(9), false, "malloc", 1, "invalid default kind 9"},
}

func TestErrors(t *testing.T) {
	for _, tt := range errCases {
		if !tt.strict {
			checkError(t, tt.kind, tt.in, tt.pos, tt.msg)
			continue
		}
		_, err := ParseFlag(tt.kind, tt.in)
		pe, ok := err.(*Error)
		if !ok || pe.Pos != tt.pos || pe.Msg != tt.msg {
			t.Errorf("ParseFlag(%v, %q) = %v, want %d %q", tt.kind, tt.in, err, tt.pos, tt.msg)
		}
	}
}

// TestErrorsGolden renders every error case the way the CLI prints it,
// followed by the caret lines.
func TestErrorsGolden(t *testing.T) {
	var b bytes.Buffer
	cases := append([]errCase{}, errCases...)
	for _, in := range []string{"", "malloc+", "malloc+0xZZ", "regex:(", "main.c:0", "kprobe:main.c:42", "tracepoint:sched", "ur:ret:malloc", "glob:["} {
		cases = append(cases, errCase{kind: Uprobe, in: in})
	}
	cases = append(cases, errCase{kind: Uprobe, in: strings.Repeat("abc:", 40) + "+"})
	for _, tt := range cases {
		parse := Parse
		if tt.strict {
			parse = ParseFlag
		}
		_, err := parse(tt.kind, tt.in)
		pe, ok := err.(*Error)
		if !ok {
			t.Fatalf("%q: error %v is not *Error", tt.in, err)
		}
		fmt.Fprintf(&b, "--%s %q: %v\n%s\n\n", tt.kind, tt.in, err, pe.Caret())
	}
	golden := filepath.Join("testdata", "errors.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./probespec -run Golden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("error messages differ from %s (run with -update and review the diff):\n%s", golden, b.String())
	}
}

func TestCaret(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{Pos: 1, Input: ""}, "\n^"},
		{Error{Pos: 3, Input: "abc"}, "abc\n  ^"},
		{Error{Pos: 4, Input: "abc"}, "abc\n   ^"},
		{Error{Pos: 3, Input: "é\x00x"}, "é\uFFFDx\n  ^"},
		{Error{Pos: 99, Input: "ab"}, "ab\n  ^"},
	}
	for _, tt := range tests {
		if got := tt.e.Caret(); got != tt.want {
			t.Errorf("Caret(%d, %q) = %q, want %q", tt.e.Pos, tt.e.Input, got, tt.want)
		}
	}
	long := &Error{Pos: 200, Input: strings.Repeat("x", 300)}
	lines := strings.Split(long.Caret(), "\n")
	if len(lines) != 2 || strings.Index(lines[1], "^") != len([]rune(lines[0]))/2+1 && len([]rune(lines[0])) > caretWindow+2 {
		t.Errorf("long caret = %q", long.Caret())
	}
}
