package symbolize

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"
)

// withPerfMapBudget sets the perf map budgets for one test.
func withPerfMapBudget(t *testing.T, bytes int64, syms int) {
	oldB, oldS := maxPerfMapBytes, maxPerfMapSyms
	maxPerfMapBytes, maxPerfMapSyms = bytes, syms
	t.Cleanup(func() { maxPerfMapBytes, maxPerfMapSyms = oldB, oldS })
}

// A sparse perf map of 40 GiB (its size is only a claim: zeros, no
// newline) is read up to the budget, a chunk at a time, with one warning;
// its first line still names its code. Before, the whole size was
// allocated at once: a fatal out-of-memory.
func TestJITMapSparseHuge(t *testing.T) {
	withPerfMapBudget(t, 8<<20, 1<<20)
	j := newFakeJIT(t)
	var warn bytes.Buffer
	j.sym = New(Config{Root: j.root, DebugDir: "-", Warn: &warn})
	j.appendMap("7f0000001000 100 JS:first\n")
	if err := os.Truncate(j.path(mapFile), 40<<30); err != nil {
		t.Skip(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	j.want(j.names(0x1010), "JS:first")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("reading the map allocated %d MiB, want a few chunks", grew>>20)
	}
	if w := warn.String(); strings.Count(w, "perf map budget") != 1 || !strings.Contains(w, "perf-3.map") {
		t.Errorf("warnings %q, want one naming the map and the budget", w)
	}
}

// Past the line budget the rest of a map is not read; a line too long to
// keep is skipped to its newline, across chunks, and the next one read.
func TestJITMapLineBudget(t *testing.T) {
	withPerfMapBudget(t, 1<<30, 2)
	j := newFakeJIT(t)
	long := strings.Repeat("x", 3*perfChunk)
	j.appendMap("7f0000001000 100 A\n" + long + "\n7f0000002000 100 B\n7f0000003000 100 C\n")
	if err := j.sym.Snapshot(7); err != nil {
		t.Fatal(err)
	}
	j.want(j.names(0x1010, 0x2010, 0x3010), "A", "B", "[anon]+0x3010")
}

// A hole in the middle of a map (zeros never written) is skipped without
// being read, as part of the line it falls in; the lines after it count.
func TestJITMapHole(t *testing.T) {
	withPerfMapBudget(t, 64<<20, 1<<20)
	j := newFakeJIT(t)
	j.appendMap("7f0000001000 100 A\n")
	f, err := os.OpenFile(j.path(mapFile), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n7f0000002000 100 B\n"), 32<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := j.sym.Snapshot(7); err != nil {
		t.Fatal(err)
	}
	j.want(j.names(0x1010, 0x2010), "A", "B")
	if m := j.sym.jitMapOf(7); m == nil || m.read > 4<<20 { // the chunks at the hole's edges
		t.Errorf("read %d bytes of a map of 32 MiB, mostly a hole", m.read)
	}
}
