package python

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// liveCode is what testdata/codes.py says of one of its code objects.
type liveCode struct {
	Addr  uint64
	Name  string
	File  string
	First int
	Lines [][2]int
}

// runScript runs the script testdata/NAME under py, decodes the JSON
// line it prints into out and returns its pid and its memory; it runs
// until t ends.
func runScript(t *testing.T, py, name string, out any) (int, *os.File) {
	t.Helper()
	cmd := exec.Command(py, filepath.Join("testdata", name))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s %s: %v", py, name, err)
	}
	if err := json.Unmarshal(line, out); err != nil {
		t.Fatalf("%s %s: %v: %s", py, name, err, line)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", cmd.Process.Pid))
	if err != nil {
		t.Skipf("read the memory of a child: %v", err)
	}
	t.Cleanup(func() { mem.Close() })
	return cmd.Process.Pid, mem
}

// pythonOf is the interpreter of pyenv's lib.
func pythonOf(lib string, v Version) string {
	return filepath.Join(filepath.Dir(filepath.Dir(lib)), "bin", "python"+v.String())
}

// Code objects read from a running interpreter of each version say what
// Python says of them: qualified name (3.11+, else the name), including
// Latin-1 and UCS-2 ones, file, first line, and the line of every code
// unit.
func TestReadCodeLive(t *testing.T) {
	for v, lib := range pyenvLibs(t) {
		t.Run(v.String(), func(t *testing.T) {
			f, err := elf.Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Inspect(f, lib)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var codes []liveCode
			_, mem := runScript(t, pythonOf(lib, v), "codes.py", &codes)
			for _, want := range codes {
				c, err := in.Layout.ReadCode(mem, want.Addr)
				if err != nil {
					t.Errorf("%s: %v", want.Name, err)
					continue
				}
				if c.Name != want.Name || c.File != want.File || c.FirstLine != want.First {
					t.Errorf("read %q %s:%d, want %q %s:%d", c.Name, c.File, c.FirstLine, want.Name, want.File, want.First)
				}
				bad := 0
				for _, ul := range want.Lines {
					if got := c.Line(uint64(ul[0])); got != ul[1] {
						if bad++; bad <= 3 {
							t.Errorf("%s: unit %d on line %d, want %d", want.Name, ul[0], got, ul[1])
						}
					}
				}
			}
		})
	}
}

// Line tables of any bytes end without panicking or reading past them.
func FuzzLines(f *testing.F) {
	f.Add([]byte{0x80 | 14<<3, 0x03, 0, 0, 0}, uint64(0), 9)
	f.Add([]byte{2, 1, 4, 0x80}, uint64(3), 10)
	f.Fuzz(func(t *testing.T, tab []byte, unit uint64, minor int) {
		c := &Code{lines: tab, FirstLine: 1, v: Version{3, minor}}
		c.Line(unit)
	})
}

// A code object read from memory that lies (any bytes) gives an error or
// bounded names, never a panic or a big read.
func FuzzReadCode(f *testing.F) {
	f.Add(make([]byte, 512), uint64(0))
	f.Fuzz(func(t *testing.T, mem []byte, addr uint64) {
		l, _ := tableLayout(Version{3, 12})
		c, err := l.ReadCode(bytes.NewReader(mem), addr)
		if err == nil && (len(c.Name) > 4*MaxName || len(c.File) > 4*MaxName) {
			t.Fatalf("names of %d and %d bytes", len(c.Name), len(c.File))
		}
	})
}
