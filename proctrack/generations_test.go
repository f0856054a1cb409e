package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
)

// genRoot is a fake root with /usr/bin/sh (spin-nofp) and /usr/bin/true
// (chain-nofp); processes map either at one address.
type genRoot struct {
	t              *testing.T
	root           string
	sh, tr         procmaps.Mapping
	spinAt, leafAt uint64 // spin_leaf in sh's mapping, leaf in true's
}

const genBase = 0x10000

func newGenRoot(t *testing.T) *genRoot {
	g := &genRoot{t: t, root: t.TempDir()}
	var spinOff, leafOff uint64
	g.sh, spinOff = g.install("spin-nofp", "/usr/bin/sh", "spin_leaf")
	g.tr, leafOff = g.install("chain-nofp", "/usr/bin/true", "leaf")
	g.spinAt, g.leafAt = genBase+spinOff, genBase+leafOff
	return g
}

// install copies fixture to path and returns its mapping at genBase and
// the file offset of fn.
func (g *genRoot) install(fixtureName, path, fn string) (procmaps.Mapping, uint64) {
	g.t.Helper()
	dst := filepath.Join(g.root, path)
	installFixture(g.t, fixtureName, dst)
	return maptest.FileMapping(g.t, dst, path, genBase), maptest.FuncFileOffset(g.t, dst, fn)
}

// snapshot writes /proc/PID (process) and snapshots it in s.
func (g *genRoot) snapshot(s *History, pid int, comm string, m procmaps.Mapping) {
	g.t.Helper()
	g.process(pid, comm, m)
	if err := s.Snapshot(pid); err != nil {
		g.t.Fatal(err)
	}
}

// process writes /proc/PID with comm and one mapping.
func (g *genRoot) process(pid int, comm string, m procmaps.Mapping) {
	g.t.Helper()
	dir := filepath.Join(g.root, "proc", fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "root"))
	if err := os.Symlink(g.root, filepath.Join(dir, "root")); err != nil {
		g.t.Fatal(err)
	}
	for name, data := range map[string]string{"maps": maptest.MapsLine(m), "comm": comm + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
}

// A process's samples before its exec are named from the mappings it had
// then, told apart by the comm they were counted under: a shell's forked
// child first read after it exec'd true (its earlier set is its parent's),
// and a process read before its exec whose new mappings come from records.
// Both sets map their program at the same address. An exec that keeps the
// comm (a program re-executing itself, pid 13) cannot be told apart: the
// current set names its stacks.
func TestExecGenerations(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	g.process(10, "sh", g.sh)
	g.process(11, "true", g.tr)
	if err := s.Snapshot(11); err != nil { // the child, read after its exec
		t.Fatal(err)
	}
	s.Inherit(11, 10)
	g.process(12, "sh", g.sh)
	if err := s.Snapshot(12); err != nil { // read before its exec
		t.Fatal(err)
	}
	s.ExecReset(12, "true")
	s.AddMapping(12, g.tr)
	g.snapshot(s, 13, "sh", g.sh)
	s.ExecReset(13, "sh")
	s.AddMapping(13, g.tr)
	wantFunctions(t, s, []functionCase{
		{11, "sh", g.spinAt, "spin_leaf"},
		{11, "true", g.leafAt, "leaf"},
		{11, "", g.leafAt, "leaf"},
		{12, "sh", g.spinAt, "spin_leaf"},
		{12, "true", g.leafAt, "leaf"},
		{12, "other", g.leafAt, "leaf"},
		{13, "sh", g.leafAt, "leaf"},
	})
}

// moved is m mapped from start instead.
func moved(m procmaps.Mapping, start uint64) procmaps.Mapping {
	m.End, m.Start = start+m.End-m.Start, start
	return m
}

// The mapping records of an exec are handled up to a tick after it, so
// what a set holds depends on the order of /proc reads, records and
// notices. Each process here runs three images in turn, each at its own
// address: "sh" at genBase (sh's code), then one named by the first exec
// (true's code at base2), then one named by the second (sh's code at
// base3). Stacks in each are named whatever the order:
//   - 20: read from /proc after its first exec, before that exec's record
//     (only part of the new image was mapped then);
//   - 21: known from records alone (never read);
//   - 22: the first and last images share the comm "sh" (a shell's child
//     that ran env, then a shell);
//   - 23: a child forked by 24 after 24's exec, whose notice was handled
//     before that exec's records: its copy of 24's set is stale.
func TestExecRecordOrder(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	const base2, base3 = 0x400000, 0x800000
	spin3, leaf2 := g.spinAt-genBase+base3, g.leafAt-genBase+base2
	third := map[int]string{20: "true", 21: "true", 22: "sh"}
	g.snapshot(s, 20, "env", g.sh)
	g.snapshot(s, 22, "sh", g.sh)
	for _, pid := range []int{20, 21, 22} {
		s.ExecReset(pid, "env")
		s.AddMapping(pid, moved(g.tr, base2))
		s.ExecReset(pid, third[pid])
		s.AddMapping(pid, moved(g.sh, base3))
	}
	g.snapshot(s, 24, "sh", g.sh)
	s.Inherit(23, 24) // no /proc/23: gone
	s.ExecReset(24, "true")
	s.AddMapping(24, moved(g.tr, base2))
	wantFunctions(t, s, []functionCase{
		{20, "env", leaf2, "leaf"},
		{20, "true", spin3, "spin_leaf"},
		{21, "env", leaf2, "leaf"},
		{21, "true", spin3, "spin_leaf"},
		{22, "sh", g.spinAt, "spin_leaf"},
		{22, "env", leaf2, "leaf"},
		{22, "sh", spin3, "spin_leaf"},
		{23, "true", leaf2, "leaf"},
		{23, "sh", g.spinAt, "spin_leaf"},
	})
}

// Mappings gives the user-space unwinder the mappings of the image that
// ran a stack: a vfork child's stack in its parent's code, finished after
// both the child and the parent exec'd, gets the parent's set from
// before its exec.
func TestMappingsOfImage(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	const base2, base3 = 0x400000, 0x800000
	g.snapshot(s, 30, "sh", g.sh)
	s.Inherit(31, 30)
	s.ExecReset(31, "true")
	s.AddMapping(31, moved(g.tr, base2))
	s.ExecReset(30, "true")
	s.AddMapping(30, moved(g.tr, base3))
	for _, c := range []struct {
		comm string
		pc   uint64
		want uint64 // start of the mapping holding pc
	}{
		{"sh", g.spinAt, genBase},
		{"true", g.leafAt - genBase + base2, base2},
	} {
		maps := s.Mappings(31, c.comm, []uint64{c.pc})
		if len(maps) != 1 || maps[0].Start != c.want {
			t.Errorf("comm %q pc 0x%x: %+v, want one mapping from 0x%x", c.comm, c.pc, maps, c.want)
		}
	}
}

// A fork record builds the child's sets from the records that follow it,
// in order, whatever /proc showed. Pid 41 was read in the middle of its
// exec of true, between the switch to the new address space and the new
// comm: comm sh, true's code mapped where sh's was (without ASLR every
// image maps at one address). Its stacks under sh (before the exec) are
// still named from its parent's copy, those under true from the records.
// A second read in the middle of a later exec (comm true, sh's code) is
// not mixed into true's set either.
func TestForkRecords(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	g.snapshot(s, 40, "sh", g.sh)
	g.snapshot(s, 41, "sh", g.tr)
	s.Inherit(41, 40)
	s.Fork(41, 40, 0)
	s.ExecReset(41, "true")
	s.AddMapping(41, g.tr)
	g.snapshot(s, 41, "true", g.sh)
	s.Fork(42, 99, 0) // a parent never known: nothing to copy
	for _, c := range []struct {
		comm string
		addr uint64
		want string
	}{
		{"sh", g.spinAt, "spin_leaf"},
		{"true", g.leafAt, "leaf"},
	} {
		if f := functionAt(s, 41, c.comm, c.addr); f != c.want {
			t.Errorf("comm %q 0x%x: %q, want %q", c.comm, c.addr, f, c.want)
		}
	}
	if f := functionAt(s, 42, "", g.spinAt); f != "" {
		t.Errorf("pid 42 forked from an unknown parent: %q, want no name", f)
	}
}

// A process read at the start of a system-wide run (Prime) is named when
// its first event is handled after it exited, and its children start from
// its mappings; what is known already is not replaced by the older read.
func TestPrime(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	s.Prime(50, []procmaps.Mapping{g.sh}, "sh") // no /proc/50 by the time of ImageOf
	s.Fork(51, 50, 0)
	g.snapshot(s, 52, "true", g.tr)
	s.Prime(52, []procmaps.Mapping{g.sh}, "sh")
	for _, c := range []struct {
		pid  int
		addr uint64
		want string
	}{
		{50, g.spinAt, "spin_leaf"},
		{51, g.spinAt, "spin_leaf"},
		{52, g.leafAt, "leaf"},
	} {
		if f := functionAt(s, c.pid, "", c.addr); f != c.want {
			t.Errorf("pid %d 0x%x: %q, want %q", c.pid, c.addr, f, c.want)
		}
	}
}

// Forked children share their parent's set until one of them changes it
// (procMaps.shared): a shell's children that exec at once keep no copy of
// their own, nor does a child symbolized with it. A change to the parent
// (true mapped over sh's code) leaves its children's sets, the current
// one of pid 62 and the one before the exec of pid 61, as they were.
func TestForkSharesSet(t *testing.T) {
	g := newGenRoot(t)
	s := newTestHistory(g.root)
	g.snapshot(s, 60, "sh", g.sh)
	s.Fork(61, 60, 0)
	s.Fork(62, 60, 0)
	s.ImageOf(62, "sh", []uint64{g.spinAt}) // its objects are its parent's: nothing to load
	if p, c := s.procs[60].maps, s.procs[62].maps; len(c) == 0 || &p[0] != &c[0] {
		t.Errorf("pid 62's mappings are a copy of its parent's, want them shared")
	}
	s.ExecReset(61, "true")
	s.AddMapping(61, g.tr)
	s.AddMapping(60, g.tr)
	wantFunctions(t, s, []functionCase{
		{60, "", g.leafAt, "leaf"},
		{61, "true", g.leafAt, "leaf"},
		{61, "sh", g.spinAt, "spin_leaf"},
		{62, "sh", g.spinAt, "spin_leaf"},
	})
}

// functionCase is the function that should name addr of pid, counted
// under comm.
type functionCase struct {
	pid  int
	comm string
	addr uint64
	want string
}

func wantFunctions(t *testing.T, s *History, cases []functionCase) {
	t.Helper()
	for _, c := range cases {
		if f := functionAt(s, c.pid, c.comm, c.addr); f != c.want {
			t.Errorf("pid %d comm %q 0x%x: %q, want %q", c.pid, c.comm, c.addr, f, c.want)
		}
	}
}
