package resolver

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/probee/probee/probespec"
)

func TestVersionNames(t *testing.T) {
	ts := []AttachPoint{
		{Symbol: "memcpy", Address: 0x9be70, Aliases: []string{"__new_memcpy", "memcpy@@GLIBC_2.14"}},
		{Symbol: "memcpy", Address: 0xa2d70, Aliases: []string{"__memcpy_sse2_unaligned", "memcpy@GLIBC_2.2.5"}},
		{Symbol: "malloc", Address: 0x98930, Aliases: []string{"malloc@@GLIBC_2.2.5"}},
		{Symbol: "once", Address: 0x98990, Aliases: []string{"once@GLIBC_2.2.5"}}, // one address: kept
	}
	versionNames(ts)
	want := []string{"memcpy", "memcpy@GLIBC_2.2.5", "malloc", "once"}
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
	ts := []AttachPoint{
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

// SortAttachPoints orders like a stable sort on (String(), Address).
func TestSortAttachPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []probespec.Kind{probespec.Uprobe, probespec.Kprobe, probespec.Tracepoint}
	for round := range 50 {
		ts := make([]AttachPoint, rng.IntN(40))
		for i := range ts {
			ts[i] = AttachPoint{Kind: kinds[rng.IntN(3)], Ret: rng.IntN(2) == 0, Path: fmt.Sprintf("/l%d.so", rng.IntN(3)),
				Symbol: []string{"", "a", "ab", "a.b", "a+b", "b"}[rng.IntN(6)], Address: uint64(rng.IntN(4)),
				Offset: uint64(rng.IntN(2) * 0x10), Category: "c", Name: fmt.Sprint(rng.IntN(3)), Line: i}
		}
		want := append([]AttachPoint{}, ts...)
		sort.SliceStable(want, func(a, b int) bool {
			if sa, sb := want[a].String(), want[b].String(); sa != sb {
				return sa < sb
			}
			return want[a].Address < want[b].Address
		})
		SortAttachPoints(ts)
		if !reflect.DeepEqual(ts, want) {
			t.Fatalf("round %d: got %v\nwant %v", round, ts, want)
		}
	}
}
