package python

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/safeelf"
)

// Process is an interpreter as one process maps it: where its runtime and
// its eval loop are in that process.
type Process struct {
	*Interpreter
	Runtime            uint64 // _PyRuntime
	EvalStart, EvalEnd uint64 // _PyEval_EvalFrameDefault's code
}

// candidateName matches the file names of interpreters: python3.11,
// libpython3.12.so.1.0 (a version is needed: python3 alone is a link).
var candidateName = regexp.MustCompile(`^(lib)?python\d\.\d{1,2}`)

// Candidate reports whether a mapped file may hold an interpreter, by
// its name: a process maps many files, and only these are opened.
func Candidate(path string) bool { return candidateName.MatchString(filepath.Base(path)) }

// Locate places in a process the interpreter in of the ELF object f,
// which the process maps from the file of maps' lines named path: the
// load bias comes from the mapping of f's first executable segment.
func Locate(in *Interpreter, f *elf.File, maps []procmaps.Mapping, path string) (*Process, error) {
	bias, err := loadBias(f, maps, path)
	if err != nil {
		return nil, err
	}
	return &Process{Interpreter: in, Runtime: in.Runtime + bias,
		EvalStart: in.EvalFrame + bias, EvalEnd: in.EvalFrame + in.EvalFrameSize + bias}, nil
}

// loadBias is what the process adds to f's addresses: the start of the
// executable mapping of path whose file offset is that of f's first
// executable segment (page aligned), less the segment's address there.
func loadBias(f *elf.File, maps []procmaps.Mapping, path string) (uint64, error) {
	const page = 4096
	for _, seg := range safeelf.Loads(f) {
		if !seg.Exec() {
			continue
		}
		off, vaddr := seg.Offset&^(page-1), seg.Vaddr&^(page-1)
		for _, m := range maps {
			if m.Path == path && m.Exec() && m.Offset == off {
				return m.Start - vaddr, nil
			}
		}
		return 0, fmt.Errorf("%s: no executable mapping at file offset %#x", path, off)
	}
	return 0, fmt.Errorf("%s: no executable segment", path)
}
