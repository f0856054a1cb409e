package resolver

import (
	"bytes"
	"testing"

	"github.com/probee/probee/probespec"
)

func TestVersionNames(t *testing.T) {
	ts := []Target{
		{Symbol: "memcpy", Address: 0x9be70, Aliases: []string{"__new_memcpy", "memcpy@@GLIBC_2.14"}},
		{Symbol: "memcpy", Address: 0xa2d70, Aliases: []string{"__memcpy_sse2_unaligned", "memcpy@GLIBC_2.2.5"}},
		{Symbol: "malloc", Address: 0x98930, Aliases: []string{"malloc@@GLIBC_2.2.5"}},
	}
	versionNames(ts)
	want := []string{"memcpy", "memcpy@GLIBC_2.2.5", "malloc"}
	for i, w := range want {
		if ts[i].Symbol != w {
			t.Errorf("target %d: %q, want %q", i, ts[i].Symbol, w)
		}
	}
	if ts[1].Aliases[1] != "memcpy" {
		t.Errorf("plain name not kept as an alias: %v", ts[1].Aliases)
	}
}

func TestWriteListSameNames(t *testing.T) {
	ts := []Target{
		{Kind: probespec.Uprobe, Path: "/l.so", Symbol: "cleanup", Address: 0x10},
		{Kind: probespec.Uprobe, Path: "/l.so", Symbol: "cleanup", Address: 0x20},
		{Kind: probespec.Uprobe, Path: "/l.so", Symbol: "main", Address: 0x30},
	}
	var b bytes.Buffer
	if err := WriteList(&b, ts, false); err != nil {
		t.Fatal(err)
	}
	want := "uprobe:/l.so:cleanup  addr=0x10\nuprobe:/l.so:cleanup  addr=0x20\nuprobe:/l.so:main\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
