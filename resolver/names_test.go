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
	ts := []Target{
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

// SortTargets orders like a stable sort on (String(), Address).
func TestSortTargets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []probespec.Kind{probespec.Uprobe, probespec.Kprobe, probespec.Tracepoint}
	for round := range 50 {
		ts := make([]Target, rng.IntN(40))
		for i := range ts {
			ts[i] = Target{Kind: kinds[rng.IntN(3)], Ret: rng.IntN(2) == 0, Path: fmt.Sprintf("/l%d.so", rng.IntN(3)),
				Symbol: []string{"", "a", "ab", "a.b", "a+b", "b"}[rng.IntN(6)], Address: uint64(rng.IntN(4)),
				Offset: uint64(rng.IntN(2) * 0x10), Category: "c", Name: fmt.Sprint(rng.IntN(3)), Line: i}
		}
		want := append([]Target{}, ts...)
		sort.SliceStable(want, func(a, b int) bool {
			if sa, sb := want[a].String(), want[b].String(); sa != sb {
				return sa < sb
			}
			return want[a].Address < want[b].Address
		})
		SortTargets(ts)
		if !reflect.DeepEqual(ts, want) {
			t.Fatalf("round %d: got %v\nwant %v", round, ts, want)
		}
	}
}

// TestFuncAtAlias checks which of several symbols at one address names it.
func TestFuncAtAlias(t *testing.T) {
	o := &Object{Funcs: []Symbol{
		{Name: "_ZN1T9VisitDeclEv", Addr: 0x100, Global: true}, // dropped body: size 0
		{Name: "_ZN1S9SubstDeclEPvS0_S0_", Addr: 0x100, Size: 0x40, Global: true},
		{Name: "__libc_malloc", Addr: 0x200, Size: 0x20, Global: true},
		{Name: "malloc", Addr: 0x200, Size: 0x20, Global: true},
		{Name: "local", Addr: 0x200, Size: 0x20},
		{Name: "label", Addr: 0x300},
	}}
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0x100, "_ZN1S9SubstDeclEPvS0_S0_"},
		{0x13f, "_ZN1S9SubstDeclEPvS0_S0_"},
		{0x210, "malloc"},
		{0x300, "label"},
		{0x301, ""},
	} {
		got := ""
		if i := o.funcAt(c.addr); i >= 0 {
			got = o.Funcs[i].Name
		}
		if got != c.want {
			t.Errorf("funcAt(0x%x) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestIsFragment(t *testing.T) {
	for raw, want := range map[string]bool{
		"_Z3foov.cold":   true,
		"_Z3foov.cold.1": true,
		"_RNvCs1_3abc3fooB2_.llvm.5540057329546874339.warm": true,
		"_RNvCs1_3abc3fooB2_.llvm.5540057329546874339.cold": true,
		"_Z3foov.part.0":  true,
		"_Z3foov":         false,
		"_Z3foov.isra.0":  false,
		"warmup":          false,
		"_Z6coldenv":      false,
		"_Z3foov.coldish": false,
	} {
		if got := isFragment(raw); got != want {
			t.Errorf("isFragment(%q) = %v, want %v", raw, got, want)
		}
	}
}
