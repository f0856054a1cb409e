package resolver

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// genRoot is a fake root with /usr/bin/sh (spin-nofp) and /usr/bin/true
// (chain-nofp); processes map either at one address.
type genRoot struct {
	t              *testing.T
	root           string
	sh, tr         Mapping
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
func (g *genRoot) install(fixtureName, path, fn string) (Mapping, uint64) {
	g.t.Helper()
	dst := filepath.Join(g.root, path)
	installFixture(g.t, fixtureName, dst)
	return fileMapping(g.t, dst, path, genBase), funcFileOffset(g.t, dst, fn)
}

// process writes /proc/PID with comm and one mapping.
func (g *genRoot) process(pid int, comm string, m Mapping) {
	g.t.Helper()
	dir := filepath.Join(g.root, "proc", fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "root"))
	if err := os.Symlink(g.root, filepath.Join(dir, "root")); err != nil {
		g.t.Fatal(err)
	}
	for name, data := range map[string]string{"maps": mapsLine(m), "comm": comm + "\n"} {
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
	s := NewSymbolizer(Scope{Root: g.root}, nil)
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
	g.process(13, "sh", g.sh)
	if err := s.Snapshot(13); err != nil {
		t.Fatal(err)
	}
	s.ExecReset(13, "sh")
	s.AddMapping(13, g.tr)
	for _, c := range []struct {
		pid  int
		comm string
		addr uint64
		want string
	}{
		{11, "sh", g.spinAt, "spin_leaf"},
		{11, "true", g.leafAt, "leaf"},
		{11, "", g.leafAt, "leaf"},
		{12, "sh", g.spinAt, "spin_leaf"},
		{12, "true", g.leafAt, "leaf"},
		{12, "other", g.leafAt, "leaf"},
		{13, "sh", g.leafAt, "leaf"},
	} {
		if f := s.Frames(c.pid, c.comm, []uint64{c.addr}); f[0].Function != c.want {
			t.Errorf("pid %d comm %q 0x%x: %q, want %q", c.pid, c.comm, c.addr, f[0].Function, c.want)
		}
	}
}
