package symbolize

import (
	"slices"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/objfile"
)

// An object used by two Prefetch calls in a row keeps its DWARF, within
// the budget, until hotCalls calls go by without it; one used once, or
// past the budget, lets go of it at once.
func TestHotDWARF(t *testing.T) {
	o, err := objfile.LoadObject(maptest.Fixture(t, "inline"), "")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(o.Funcs, func(s objfile.Symbol) bool { return s.Name == "main" })
	if i < 0 {
		t.Fatal("no main in inline")
	}
	use := func(h *hotDWARF) {
		h.begin()
		o.SourceAt(o.Funcs[i].Addr)
		h.done(o)
	}
	var h hotDWARF
	use(&h)
	if o.HoldsDWARF() {
		t.Fatal("DWARF kept after one call")
	}
	use(&h)
	if !o.HoldsDWARF() || h.bytes != o.DWARFBytes() || h.bytes == 0 {
		t.Fatalf("after two calls in a row: DWARF held %v, %d bytes counted of %d", o.HoldsDWARF(), h.bytes, o.DWARFBytes())
	}
	for range hotCalls {
		h.begin()
	}
	if !o.HoldsDWARF() {
		t.Fatalf("DWARF let go after %d calls without it, want after %d", hotCalls, hotCalls+1)
	}
	h.begin()
	if o.HoldsDWARF() || h.bytes != 0 || len(h.objs) != 0 {
		t.Errorf("after %d calls without it: DWARF held %v, %d bytes, %d objects", hotCalls+1, o.HoldsDWARF(), h.bytes, len(h.objs))
	}

	small := hotDWARF{max: 1}
	use(&small)
	use(&small)
	if o.HoldsDWARF() || small.bytes != 0 {
		t.Errorf("past the budget: DWARF held %v, %d bytes", o.HoldsDWARF(), small.bytes)
	}
}
