package perfmap

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeProc is a process in a fake /proc under root: pid 7, pid 3 in its
// namespace, started 200 s after a boot 200 s ago (now).
type fakeProc struct {
	t     *testing.T
	root  string
	open  *Opener
	warns []string
	m     *Map
}

// mapFile is the perf map as the process sees it: /tmp/perf-3.map.
const mapFile = "/proc/7/root/tmp/perf-3.map"

const base = 0x7f0000000000

func newFakeProc(t *testing.T) *fakeProc {
	p := &fakeProc{t: t, root: t.TempDir()}
	p.write("/proc/7/status", "Name:\tnode\nPid:\t7\nNSpid:\t7\t3\n")
	p.write("/proc/stat", "cpu  1 2 3\nbtime "+strconv.FormatInt(time.Now().Unix()-200, 10)+"\nprocesses 9\n")
	p.write("/proc/7/stat", "7 (a) b) S"+strings.Repeat(" 1", 18)+" 20000 0 0\n")
	if err := os.MkdirAll(p.path("/proc/7/root/tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.open = &Opener{Root: p.root, Warnf: func(f string, a ...any) { p.warns = append(p.warns, fmt.Sprintf(f, a...)) }}
	return p
}

func (p *fakeProc) path(name string) string { return filepath.Join(p.root, name) }

func (p *fakeProc) write(name, text string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p.path(name)), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.path(name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *fakeProc) appendMap(text string) {
	p.t.Helper()
	f, err := os.OpenFile(p.path(mapFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		p.t.Fatal(err)
	}
}

// names looks up offsets from base in the map opened (Open) first, read
// again for lines appended where one is missing: "" for none.
func (p *fakeProc) names(offs ...uint64) []string {
	if p.m == nil {
		p.m = p.open.Open(7)
	}
	var out []string
	for _, o := range offs {
		s, ok := p.m.Lookup(base + o)
		if !ok {
			p.m.Refresh()
			s, _ = p.m.Lookup(base + o)
		}
		out = append(out, s.Name)
	}
	return out
}

func (p *fakeProc) want(got []string, want ...string) {
	p.t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		p.t.Errorf("names = %q, want %q", got, want)
	}
}

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
	j := newFakeProc(t)
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
	if w := strings.Join(j.warns, "\n"); strings.Count(w, "perf map budget") != 1 || !strings.Contains(w, "perf-3.map") {
		t.Errorf("warnings %q, want one naming the map and the budget", w)
	}
}

// Past the line budget the rest of a map is not read; a line too long to
// keep is skipped to its newline, across chunks, and the next one read.
func TestJITMapLineBudget(t *testing.T) {
	withPerfMapBudget(t, 1<<30, 2)
	j := newFakeProc(t)
	long := strings.Repeat("x", 3*perfChunk)
	j.appendMap("7f0000001000 100 A\n" + long + "\n7f0000002000 100 B\n7f0000003000 100 C\n")
	j.want(j.names(0x1010, 0x2010, 0x3010), "A", "B", "")
}

// A hole in the middle of a map (zeros never written) is skipped without
// being read, as part of the line it falls in; the lines after it count.
func TestJITMapHole(t *testing.T) {
	withPerfMapBudget(t, 64<<20, 1<<20)
	j := newFakeProc(t)
	j.appendMap("7f0000001000 100 A\n")
	f, err := os.OpenFile(j.path(mapFile), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n7f0000002000 100 B\n"), 32<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j.want(j.names(0x1010, 0x2010), "A", "B")
	if j.m.read > 4<<20 { // the chunks at the hole's edges
		t.Errorf("read %d bytes of a map of 32 MiB, mostly a hole", j.m.read)
	}
}

// A file created after the map was opened is opened while the process is
// the same; past maxHeldPerfMaps open files, maps are read by path.
func TestLateFileAndCap(t *testing.T) {
	for _, full := range []bool{false, true} {
		j := newFakeProc(t)
		if full {
			j.appendMap("7f0000001000 100 first\n")
			j.open.held.Store(maxHeldPerfMaps)
		}
		j.m = j.open.Open(7)
		j.appendMap("7f0000002000 100 late\n")
		j.want(j.names(0x2000), "late")
		if n, want := j.open.Held(), map[bool]int{false: 1, true: maxHeldPerfMaps}[full]; n != want {
			t.Errorf("full %v: %d perf maps open, want %d", full, n, want)
		}
		j.m.Release()
		if n, want := j.open.Held(), map[bool]int{false: 0, true: maxHeldPerfMaps}[full]; n != want {
			t.Errorf("full %v: %d perf maps open after Release, want %d", full, n, want)
		}
	}
}
