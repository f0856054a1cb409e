package trace

import "errors"

// UnwindMode is how user stacks are walked (--unwind). Its zero value is the
// default, auto.
type UnwindMode int

const (
	UnwindAuto  UnwindMode = iota // DWARF tables, but frame pointers for Go binaries
	UnwindFP                      // frame pointers only: no tables are loaded
	UnwindDWARF                   // DWARF tables for every binary that has them
)

var unwindNames = [...]string{UnwindAuto: "auto", UnwindFP: "fp", UnwindDWARF: "dwarf"}

// parseUnwind parses an --unwind value: fp, dwarf or auto.
func parseUnwind(s string) (UnwindMode, error) {
	for m, name := range unwindNames {
		if s == name {
			return UnwindMode(m), nil
		}
	}
	return UnwindAuto, errors.New("want fp, dwarf or auto")
}

func (m UnwindMode) String() string {
	if m < 0 || int(m) >= len(unwindNames) {
		return "UnwindMode(?)"
	}
	return unwindNames[m]
}

// Set makes *UnwindMode a flag.Value.
func (m *UnwindMode) Set(s string) error {
	v, err := parseUnwind(s)
	if err == nil {
		*m = v
	}
	return err
}

// dwarf reports whether the BPF side walks stacks with DWARF tables.
func (m UnwindMode) dwarf() bool { return m != UnwindFP }

// goByFramePointers reports whether Go binaries get no DWARF table (Go
// keeps frame pointers on amd64; its tables are large and add nothing).
func (m UnwindMode) goByFramePointers() bool { return m == UnwindAuto }
