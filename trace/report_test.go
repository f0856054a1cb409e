package trace

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/proctrack"
)

// A profile's drops name a partial cause as partial stacks (once), any
// other by its description alone.
func TestDropLabel(t *testing.T) {
	for c := bpf.DropCause(0); c.String() != fmt.Sprintf("drop cause %d", int(c)); c++ {
		label := dropLabel(c)
		if strings.HasPrefix(label, "partial stacks: ") != c.Partial() || strings.Count(label, "partial stacks: ") > 1 ||
			!strings.HasSuffix(label, c.String()) {
			t.Errorf("cause %d (partial %v): label %q", c, c.Partial(), label)
		}
	}
}

func TestKernelLoss(t *testing.T) {
	for _, c := range []struct {
		cause bpf.DropCause
		want  Loss
	}{
		{bpf.DropCountsFull, Loss{Dropped, 7, "counts map full (raise --max-stacks)"}},
		{bpf.DropDeferLost, Loss{Dropped, 7, bpf.DropDeferLost.String()}},
		{bpf.DropNoTables, Loss{Partial, 7, "taken before the process's unwind tables were loaded (frame pointers used)"}},
		{bpf.DropUnknownPC, Loss{Partial, 7, bpf.DropUnknownPC.String()}},
		{bpf.DropCut, Loss{Partial, 7, bpf.DropCut.String()}},
	} {
		if got := kernelLoss(c.cause, 7); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.cause, got, c.want)
		}
	}
}

// The stacks the kernel handed over unfinished: those finished (cut or
// not), those cut (partial) and those dropped, each only when there are
// some.
func TestDeferredLosses(t *testing.T) {
	for _, c := range []struct {
		st   proctrack.DeferredStats
		want []LossKind
		n    []uint64
	}{
		{proctrack.DeferredStats{}, nil, nil},
		{proctrack.DeferredStats{Finished: 5}, []LossKind{Finished}, []uint64{5}},
		{proctrack.DeferredStats{Finished: 5, Cut: 2}, []LossKind{Finished, Partial}, []uint64{7, 2}},
		{proctrack.DeferredStats{Dropped: 3}, []LossKind{Dropped}, []uint64{3}},
		{proctrack.DeferredStats{Finished: 1, Cut: 1, Dropped: 1}, []LossKind{Finished, Partial, Dropped}, []uint64{2, 1, 1}},
	} {
		tr := &tracer{deferred: c.st}
		var kinds []LossKind
		var n []uint64
		for _, l := range tr.deferredLosses() {
			kinds, n = append(kinds, l.Kind), append(n, l.Count)
		}
		if !slices.Equal(kinds, c.want) || !slices.Equal(n, c.n) {
			t.Errorf("%+v: kinds %v counts %v, want %v %v", c.st, kinds, n, c.want, c.n)
		}
	}
}

// Dropped sums what was lost (Dropped, Lost), not the partial or
// finished stacks, which are counted.
func TestReportDropped(t *testing.T) {
	for _, c := range []struct {
		losses []Loss
		want   uint64
	}{
		{nil, 0},
		{[]Loss{{Partial, 4, "x"}, {Finished, 9, "y"}}, 0},
		{[]Loss{{Dropped, 2, "a"}, {Partial, 4, "x"}, {Lost, 3, "m"}}, 5},
	} {
		if got := (&Report{Losses: c.losses}).Dropped(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.losses, got, c.want)
		}
	}
}

func TestReturnsText(t *testing.T) {
	for _, c := range []struct {
		ret, uret int
		want      string
	}{
		{0, 1, "returns probed with a uretprobe for 1 function"},
		{2, 0, "returns probed at the RET instructions of 2 functions"},
		{2, 1, "returns probed at the RET instructions of 2 functions, with a uretprobe for 1 function"},
	} {
		if got := returnsText(c.ret, c.uret); got != c.want {
			t.Errorf("returnsText(%d, %d) = %q, want %q", c.ret, c.uret, got, c.want)
		}
	}
}
