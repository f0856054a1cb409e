package proctrack

import (
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/objfile"
)

// functionAt is the function that names addr of the image that ran a
// stack of pid counted under comm (ImageOf), as the symbolizer names it
// from the image's object: "" when none does.
func functionAt(h *History, pid int, comm string, addr uint64) string {
	g := h.ImageOf(pid, comm, []uint64{addr})
	if g == nil {
		return ""
	}
	m, o, ok := g.At(addr)
	if !ok || o == nil {
		return ""
	}
	va, ok := o.VirtAddr(addr - m.Start + m.Offset)
	if !ok {
		return ""
	}
	_, name := o.SymbolAt(va)
	return name
}

// newTestHistory is a History over root without separate debug files.
func newTestHistory(root string) *History {
	return NewHistory(HistoryConfig{Root: root, Objects: objfile.NewIndex("")})
}

// installFixture copies fixture binary name to dst, creating its directory.
func installFixture(t *testing.T, name, dst string) {
	t.Helper()
	maptest.Install(t, maptest.Fixture(t, name), dst)
}
