package resolver

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver/usdt"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

var listTargets = []AttachPoint{
	{Kind: probespec.Uprobe, Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", BuildID: "93ac61ec", Symbol: "malloc",
		Aliases: []string{"__libc_malloc", "__malloc"}, Address: 0xa0e70, FileOffset: 0xa0e70, Size: 0x1b2,
		SymbolFrom: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
	{Kind: probespec.Uprobe, Ret: true, Path: "/opt/app", Symbol: "_ZN2ns5Klass6methodEi", Demangled: "ns::Klass::method(int)",
		Address: 0x15a0, FileOffset: 0x15a0, Size: 0x30, Offset: 4, SymbolFrom: "/usr/lib/debug/.build-id/ab/cd.debug"},
	{Kind: probespec.Uprobe, Path: "/opt/app", Symbol: "caller_one", Address: 0x11c0, FileOffset: 0x11c0, Size: 0x20,
		SourceFile: "/src/inline.c", Line: 21, SymbolFrom: "/opt/app"},
	{Kind: probespec.Kprobe, Symbol: "vfs_read"},
	{Kind: probespec.Kprobe, Ret: true, Symbol: "ext4_file_open", Module: "ext4"},
	{Kind: probespec.Tracepoint, Category: "sched", Name: "sched_switch"},
	{Kind: probespec.USDT, Path: "/opt/usdt", BuildID: "3a58", Provider: "fx", Name: "multi", Sites: []usdt.Site{
		{Address: 0x13d0, FileOffset: 0x13d0, ArgText: "-4@$1", Args: mustArgs("-4@$1")},
		{Address: 0x13f0, FileOffset: 0x13f0, ArgText: "-4@%edi 8@-8(%rbp)", Args: mustArgs("-4@%edi 8@-8(%rbp)")},
	}},
	{Kind: probespec.USDT, Path: "/opt/usdt", Provider: "fx", Name: "gated", Sites: []usdt.Site{
		{Address: 0x1354, FileOffset: 0x1354, Semaphore: 0x4070, SemaphoreOffset: 0x3070, ArgText: "8@%fs:8", ArgsErr: `argument "8@%fs:8": segment-relative operands are not supported`},
	}},
	// As Resolve leaves it: -v and --json demangle the symbol.
	{Kind: probespec.Uprobe, Path: "/opt/app", Symbol: "_ZN2ns5twiceIiEET_S1_", Address: 0x1600, FileOffset: 0x1600, Size: 0x10,
		SymbolFrom: "/opt/app"},
}

func mustArgs(s string) []usdt.Arg {
	a, err := usdt.ParseArgs(s)
	if err != nil {
		panic(err)
	}
	return a
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to accept):\n%s", p, got)
	}
}

func TestWriteListGolden(t *testing.T) {
	for _, tt := range []struct {
		name    string
		verbose bool
	}{{"list.golden", false}, {"list-verbose.golden", true}} {
		var b bytes.Buffer
		if err := WriteList(&b, listTargets, tt.verbose); err != nil {
			t.Fatal(err)
		}
		golden(t, tt.name, b.Bytes())
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, listTargets); err != nil {
		t.Fatal(err)
	}
	golden(t, "list-json.golden", b.Bytes())
}
