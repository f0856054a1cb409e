package trace

import (
	"slices"
	"testing"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/probespec"
	"github.com/probee/probee/resolver"
	"github.com/probee/probee/resolver/usdt"
)

// A probe at +off or on a source line attaches off bytes into the function;
// only offset 0 is a function entry.
func TestUprobeTargetsOffset(t *testing.T) {
	in := []resolver.AttachPoint{
		{Path: "/x", Symbol: "f", FileOffset: 0x1000},
		{Path: "/x", Symbol: "f", FileOffset: 0x1000, Offset: 0x13, Line: 15},
		{Path: "/x", Symbol: "g", FileOffset: 0x2000, Ret: true},
	}
	want := []bpf.UprobeTarget{
		{Path: "/x", Offset: 0x1000, Entry: true, Name: "f"},
		{Path: "/x", Offset: 0x1013, Name: "f+0x13"},
		{Path: "/x", Offset: 0x2000, Entry: true, Ret: true, Name: "g"},
	}
	tr := &tracer{cfg: &Config{}}
	if got := tr.uprobeTargets(in); !slices.Equal(got, want) {
		t.Errorf("got %d targets:\n%+v\nwant %d:\n%+v", len(got), got, len(want), want)
	}
}

// Under --latency the returns (uretprobes, RET instructions) go to the
// return programs; a RET instruction is not a function entry, but its
// cookie says the return address is at [rsp] (bpf.cookie).
func TestUprobeTargetsLatency(t *testing.T) {
	in := []resolver.AttachPoint{
		{Path: "/x", Symbol: "f", FileOffset: 0x1000},
		{Path: "/x", Symbol: "f", FileOffset: 0x1000, Ret: true},
		{Path: "/go", Symbol: "main.g", FileOffset: 0x2000, Go: true},
		{Path: "/go", Symbol: "main.g", FileOffset: 0x2000, Offset: 0x2a, Go: true, RetInsn: true},
	}
	want := []bpf.UprobeTarget{
		{Path: "/x", Offset: 0x1000, Entry: true, Name: "f"},
		{Path: "/x", Offset: 0x1000, Entry: true, Ret: true, Return: true, Name: "f"},
		{Path: "/go", Offset: 0x2000, Entry: true, Go: true, Name: "main.g"},
		{Path: "/go", Offset: 0x202a, RetInsn: true, Go: true, Return: true, Name: "main.g+0x2a"},
	}
	tr := &tracer{cfg: &Config{Latency: true}}
	if got := tr.uprobeTargets(in); !slices.Equal(got, want) {
		t.Errorf("got %d targets:\n%+v\nwant %d:\n%+v", len(got), got, len(want), want)
	}
	// Without --latency a RET instruction probe is an ordinary probe.
	want[3].Return, want[1].Return = false, false
	tr.cfg.Latency = false
	if got := tr.uprobeTargets(in); !slices.Equal(got, want) {
		t.Errorf("without --latency got:\n%+v\nwant:\n%+v", got, want)
	}
}

// Every site of a USDT probe is a uprobe in the middle of a function (not
// an entry), its semaphore's file offset the reference counter.
func TestUSDTTargets(t *testing.T) {
	in := []resolver.AttachPoint{
		{Kind: probespec.USDT, Path: "/x", Provider: "fx", Name: "multi", Sites: []usdt.Site{
			{Address: 0x13d0, FileOffset: 0x3d0}, {Address: 0x13f0, FileOffset: 0x3f0}}},
		{Kind: probespec.USDT, Path: "/x", Provider: "fx", Name: "gated", Sites: []usdt.Site{
			{Address: 0x1354, FileOffset: 0x354, Semaphore: 0x4070, SemaphoreOffset: 0x3070}}},
	}
	want := []bpf.UprobeTarget{
		{Path: "/x", Offset: 0x3d0, Name: "fx:multi@0x13d0"},
		{Path: "/x", Offset: 0x3f0, Name: "fx:multi@0x13f0"},
		{Path: "/x", Offset: 0x354, Name: "fx:gated@0x1354", RefCtrOffset: 0x3070},
	}
	if got := usdtTargets(in); !slices.Equal(got, want) {
		t.Errorf("got %d targets:\n%+v\nwant %d:\n%+v", len(got), got, len(want), want)
	}
}
