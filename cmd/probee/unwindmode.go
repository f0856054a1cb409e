package main

import "errors"

// unwindMode is how user stacks are walked (--unwind). Its zero value is the
// default, auto.
type unwindMode int

const (
	unwindAuto  unwindMode = iota // DWARF tables, but frame pointers for Go binaries
	unwindFP                      // frame pointers only: no tables are loaded
	unwindDWARF                   // DWARF tables for every binary that has them
)

var unwindNames = [...]string{unwindAuto: "auto", unwindFP: "fp", unwindDWARF: "dwarf"}

// parseUnwind parses an --unwind value: fp, dwarf or auto.
func parseUnwind(s string) (unwindMode, error) {
	for m, name := range unwindNames {
		if s == name {
			return unwindMode(m), nil
		}
	}
	return unwindAuto, errors.New("want fp, dwarf or auto")
}

func (m unwindMode) String() string {
	if m < 0 || int(m) >= len(unwindNames) {
		return "unwindMode(?)"
	}
	return unwindNames[m]
}

// Set makes *unwindMode a flag.Value.
func (m *unwindMode) Set(s string) error {
	v, err := parseUnwind(s)
	if err == nil {
		*m = v
	}
	return err
}

// dwarf reports whether the BPF side walks stacks with DWARF tables.
func (m unwindMode) dwarf() bool { return m != unwindFP }

// goByFramePointers reports whether Go binaries get no DWARF table (Go
// keeps frame pointers on amd64; its tables are large and add nothing).
func (m unwindMode) goByFramePointers() bool { return m == unwindAuto }
