package python

import (
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/probee/probee/internal/procmaps"
)

// stackThread is what testdata/stacks.py says of one of its threads.
type stackThread struct {
	ID    uint64
	Chain []string
}

// locate finds the interpreter among the mappings of pid.
func locate(t *testing.T, pid int) *Process {
	t.Helper()
	maps, _, err := procmaps.ReadProcess(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range maps {
		if !m.Exec() || !Candidate(m.Path) || seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		f, err := elf.Open(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		in, err := Inspect(f, m.Path)
		if err != nil {
			continue // the python binary of a shared build: no _PyRuntime
		}
		p, err := Locate(in, f, maps, m.Path)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatalf("pid %d maps no interpreter", pid)
	return nil
}

// The walk finds each thread's state by its pthread_self() and reads its
// chain of calls, innermost first, with code objects that name them; its
// activations of the eval loop begin where a native frame would be: one a
// frame before 3.11; from 3.11 plain calls from Python to Python run in
// the caller's activation (a, b, c in <module>'s, y, z in x's), and each
// thread's outermost frame begins one (<module>, threading's _bootstrap,
// called from C). Whether x begins one depends on the version (3.11 calls
// Thread.run's target(*args, **kwargs) through C).
func TestWalkLive(t *testing.T) {
	pys := map[string]string{}
	for v, lib := range pyenvLibs(t) {
		pys[v.String()] = pythonOf(lib, v)
	}
	if _, err := os.Stat("/usr/bin/python3.11"); err == nil {
		pys["debian-3.11"] = "/usr/bin/python3.11" // static, stripped
	}
	for name, py := range pys {
		t.Run(name, func(t *testing.T) {
			threads := map[string]stackThread{}
			pid, mem := runScript(t, py, "stacks.py", &threads)
			p := locate(t, pid)
			for which, th := range threads {
				frames, err := p.Walk(mem, th.ID, 64)
				if err != nil {
					t.Fatalf("%s thread: %v", which, err)
				}
				var names []string
				for _, f := range frames {
					c, err := p.Layout.ReadCode(mem, f.Code)
					if err != nil {
						t.Fatalf("%s thread: %v", which, err)
					}
					names = append(names, c.Name)
				}
				if len(names) < len(th.Chain) || !slices.Equal(names[:len(th.Chain)], th.Chain) {
					t.Errorf("%s thread: %q, want it to begin with %q", which, names, th.Chain)
				}
				checkEntries(t, p.Version, which, frames, names)
			}
		})
	}
}

// checkEntries checks where the walk says activations of the eval loop
// begin (see TestWalkLive).
func checkEntries(t *testing.T, v Version, which string, frames []Frame, names []string) {
	t.Helper()
	for i, f := range frames {
		want := v.Minor < 11 || i == len(frames)-1
		if v.Minor >= 11 && names[i] == "x" {
			continue
		}
		if f.Entry != want {
			t.Errorf("%s thread: %s entry %v, want %v (%v)", which, names[i], f.Entry, want, frames)
		}
	}
}
