package python

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/probee/probee/internal/procmaps"
)

// stackThread is what testdata/stacks.py says of one of its threads.
type stackThread struct {
	ID    uint64
	Chain []string
}

// startStacks runs testdata/stacks.py under py and returns its threads,
// its pid and its memory, until t ends.
func startStacks(t *testing.T, py string) (map[string]stackThread, int, *os.File) {
	t.Helper()
	cmd := exec.Command(py, "testdata/stacks.py")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	threads := map[string]stackThread{}
	if err := json.Unmarshal(line, &threads); err != nil {
		t.Fatalf("%s: %v: %s", py, err, line)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", cmd.Process.Pid))
	if err != nil {
		t.Skipf("read the memory of a child: %v", err)
	}
	t.Cleanup(func() { mem.Close() })
	return threads, cmd.Process.Pid, mem
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
		pys[v.String()] = filepath.Join(filepath.Dir(filepath.Dir(lib)), "bin", "python"+v.String())
	}
	if _, err := os.Stat("/usr/bin/python3.11"); err == nil {
		pys["debian-3.11"] = "/usr/bin/python3.11" // static, stripped
	}
	for name, py := range pys {
		t.Run(name, func(t *testing.T) {
			threads, pid, mem := startStacks(t, py)
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
