package python

import (
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/probee/probee/internal/safeelf"
)

// Interpreter is a CPython interpreter in an ELF object: its version, the
// layout of its structures, and the addresses (in the object, before any
// load bias) a frame walk starts from.
type Interpreter struct {
	Version Version
	Layout  Layout
	// Source is where the layout came from: "_Py_DebugOffsets" (the
	// interpreter's own) or "table" (layouts.go).
	Source string
	// Runtime is _PyRuntime's address; EvalFrame and EvalFrameSize are
	// _PyEval_EvalFrameDefault's, the native function whose frames the
	// Python frames it runs stand for.
	Runtime                  uint64
	EvalFrame, EvalFrameSize uint64
}

// ErrNotPython is returned for an object that is no CPython interpreter
// of 3.7 or later (no _PyRuntime symbol).
var ErrNotPython = errors.New("not a CPython interpreter (no _PyRuntime symbol)")

// UnsupportedError names a CPython interpreter whose frames are not read:
// a version outside the table, a debug or a free-threaded build.
type UnsupportedError struct {
	Name    string
	Version Version // zero when unknown
	Why     string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s: Python frames not read: %s", e.Name, e.Why)
}

// symbols Inspect looks up.
const (
	symRuntime   = "_PyRuntime"
	symVersion   = "Py_Version" // 3.11+: PY_VERSION_HEX
	symEval      = "_PyEval_EvalFrameDefault"
	symDebugRefs = "_Py_NegativeRefcount" // debug builds (Py_REF_DEBUG) alone
)

// Inspect tells whether f, the ELF object at name, is a CPython
// interpreter, and what its frame walk needs.
func Inspect(f *elf.File, name string) (*Interpreter, error) {
	syms := findSymbols(f, symRuntime, symVersion, symEval, symDebugRefs)
	rt, ok := syms[symRuntime]
	if !ok {
		return nil, ErrNotPython
	}
	v, err := versionOf(f, name, syms)
	if err != nil {
		return nil, err
	}
	if _, ok := syms[symDebugRefs]; ok {
		return nil, &UnsupportedError{name, v, "a debug build (--with-pydebug), whose objects are laid out otherwise"}
	}
	in := &Interpreter{Version: v, Runtime: rt.Value, EvalFrame: syms[symEval].Value, EvalFrameSize: syms[symEval].Size}
	in.Layout, in.Source, err = layoutOf(f, name, v, rt)
	if err != nil {
		return nil, err
	}
	return in, nil
}

// layoutOf is the layout of the interpreter of version v whose _PyRuntime
// is rt: its _Py_DebugOffsets from 3.13 on, else the table's.
func layoutOf(f *elf.File, name string, v Version, rt safeelf.Sym) (Layout, string, error) {
	table, inTable := tableLayout(v)
	if v == (Version{3, 13}) {
		b, err := safeelf.ReadVirt(f, name, symRuntime, rt.Value, uint64(min(int(rt.Size), debugOffsetsSize)))
		if err != nil {
			return Layout{}, "", fmt.Errorf("%s: read _Py_DebugOffsets: %w", name, err)
		}
		l, err := parseDebugOffsets(b, v)
		var unsupported *UnsupportedError
		switch {
		case err == nil:
			return l, "_Py_DebugOffsets", nil
		case errors.As(err, &unsupported):
			return Layout{}, "", err
		case !errors.Is(err, errNoDebugOffsets):
			return Layout{}, "", &UnsupportedError{name, v, err.Error()}
		}
	}
	if !inTable {
		return Layout{}, "", &UnsupportedError{name, v, fmt.Sprintf("version %v, where probee knows %v to %v", v, MinVersion, MaxVersion)}
	}
	if rt.Size != 0 && rt.Size <= table.RuntimeInterpreters {
		return Layout{}, "", &UnsupportedError{name, v, fmt.Sprintf("its _PyRuntime of %d bytes is smaller than %v's", rt.Size, v)}
	}
	return table, "table", nil
}

// versionOf is the interpreter's version: its Py_Version (3.11+), else
// the one its file name says (python3.9, libpython3.8.so.1.0).
func versionOf(f *elf.File, name string, syms map[string]safeelf.Sym) (Version, error) {
	if s, ok := syms[symVersion]; ok && s.Size == 8 {
		b, err := safeelf.ReadVirt(f, name, symVersion, s.Value, 8)
		if err == nil {
			return versionOfHex(f.ByteOrder.Uint64(b)), nil
		}
	}
	m := versionName.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return Version{}, &UnsupportedError{name, Version{}, "its version is unknown (no Py_Version, and its file name says none)"}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return Version{major, minor}, nil
}

// versionName finds the version in an interpreter's file name.
var versionName = regexp.MustCompile(`python(\d)\.(\d{1,2})`)
