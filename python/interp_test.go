package python

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func inspectPath(t *testing.T, path string) (*Interpreter, error) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Inspect(f, path)
}

// Each pyenv build of 3.8 to 3.13 is found, with its version, the table's
// layout (3.13: its own _Py_DebugOffsets, which says the same), and the
// addresses its symbols give.
func TestInspectPyenv(t *testing.T) {
	for v, lib := range pyenvLibs(t) {
		in, err := inspectPath(t, lib)
		if err != nil {
			t.Errorf("%v: %v", v, err)
			continue
		}
		want, _ := tableLayout(v)
		if in.Version != v || in.Layout != want {
			t.Errorf("%s: version %v layout %+v, want %v %+v", lib, in.Version, in.Layout, v, want)
		}
		wantSource := "table"
		if v == (Version{3, 13}) {
			wantSource = "_Py_DebugOffsets"
		}
		if in.Source != wantSource || in.Runtime == 0 || in.EvalFrame == 0 || in.EvalFrameSize == 0 {
			t.Errorf("%s: source %q runtime %#x eval %#x+%d, want %s and the symbols' addresses", lib, in.Source, in.Runtime, in.EvalFrame, in.EvalFrameSize, wantSource)
		}
	}
}

// Debian's python3.11 is a static interpreter, stripped: its dynamic
// symbols and Py_Version are enough.
func TestInspectDebianPython(t *testing.T) {
	const path = "/usr/bin/python3.11"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s: %v", path, err)
	}
	in, err := inspectPath(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := tableLayout(Version{3, 11}); in.Version != (Version{3, 11}) || in.Layout != want || in.Source != "table" {
		t.Errorf("%s: %+v", path, in)
	}
}

// Older Pythons are named as unsupported (3.7 has a _PyRuntime) or are no
// interpreter to this package (2.7, 3.6); other programs are not Python.
func TestInspectRefused(t *testing.T) {
	home, _ := os.UserHomeDir()
	glob := func(pattern string) string {
		m, _ := filepath.Glob(filepath.Join(home, ".pyenv/versions", pattern))
		if len(m) == 0 {
			t.Skipf("no %s", pattern)
		}
		return m[0]
	}
	var unsupported *UnsupportedError
	if _, err := inspectPath(t, glob("3.7.*/lib/libpython3.7m.so.1.0")); !errors.As(err, &unsupported) || unsupported.Version != (Version{3, 7}) {
		t.Errorf("3.7: %v, want an UnsupportedError naming 3.7", err)
	}
	for _, p := range []string{glob("3.6.*/lib/libpython3.6m.so.1.0"), glob("2.7.*/lib/libpython2.7.so.1.0"), "/bin/sh"} {
		if _, err := inspectPath(t, p); !errors.Is(err, ErrNotPython) {
			t.Errorf("%s: %v, want ErrNotPython", p, err)
		}
	}
}

// A 3.13 _PyRuntime's _Py_DebugOffsets is checked: its cookie, version,
// build and offsets.
func TestParseDebugOffsets(t *testing.T) {
	lib, ok := pyenvLibs(t)[Version{3, 13}]
	if !ok {
		t.Skip("no pyenv 3.13")
	}
	in, err := inspectPath(t, lib)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := elf.Open(lib)
	defer f.Close()
	b := make([]byte, debugOffsetsSize)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && in.Runtime >= p.Vaddr && in.Runtime < p.Vaddr+p.Filesz {
			if _, err := p.ReadAt(b, int64(in.Runtime-p.Vaddr)); err != nil {
				t.Fatal(err)
			}
		}
	}
	mutate := func(off int, val byte) []byte {
		c := append([]byte(nil), b...)
		c[off] = val
		return c
	}
	tests := []struct {
		name string
		b    []byte
		v    Version
		ok   bool
	}{
		{"as built", b, Version{3, 13}, true},
		{"another version", b, Version{3, 12}, false},
		{"no cookie", mutate(0, 'y'), Version{3, 13}, false},
		{"free-threaded", mutate(16, 1), Version{3, 13}, false},
		{"an offset past any structure", mutate(45, 0x40), Version{3, 13}, false}, // interpreters_head
		{"short", b[:100], Version{3, 13}, false},
	}
	for _, tt := range tests {
		if _, err := parseDebugOffsets(tt.b, tt.v); (err == nil) != tt.ok {
			t.Errorf("%s: %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// parseDebugOffsets takes any bytes without panicking.
func FuzzParseDebugOffsets(f *testing.F) {
	seed := make([]byte, debugOffsetsSize)
	copy(seed, debugCookie[:])
	seed[11] = 3
	seed[10] = 13
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseDebugOffsets(b, Version{3, 13})
		if err == nil && l.check() != nil {
			t.Fatalf("a layout with an offset past any structure: %+v", l)
		}
	})
}
