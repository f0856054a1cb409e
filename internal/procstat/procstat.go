// Package procstat parses /proc/PID/stat, for the fields probee reads of
// a process: its state (a zombie's other files no longer say what it was),
// its parent, and its start time (which tells a process from a later one
// with its pid). One parser for resolver, proctrack and bpf.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// UserHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture).
const UserHZ = 100

// Stat is what probee reads of /proc/PID/stat.
type Stat struct {
	State byte   // 'R', 'S', 'D', 'Z' (zombie), 'X' (dead), ...
	PPID  int    // field 4
	Start uint64 // field 22: clock ticks (1/UserHZ s) after boot
}

// Exited reports whether the process has exited and waits to be reaped,
// or is being: state Z or X.
func (s Stat) Exited() bool { return s.State == 'Z' || s.State == 'X' }

// Read reads and parses the stat file at path (/proc/PID/stat).
func Read(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	st, err := Parse(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// Parse parses the text of a stat file. The command name (field 2) may
// hold spaces and parentheses: the fields are counted from its last ')'.
func Parse(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("no command name")
	}
	f := strings.Fields(string(b[i+1:])) // from field 3 (state) on
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("%d fields after the command name, want 20", len(f))
	}
	if c := f[0][0]; len(f[0]) != 1 || (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
		return Stat{}, fmt.Errorf("state %q is not a letter", f[0])
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, fmt.Errorf("parent %q: %w", f[1], err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("start time %q: %w", f[19], err)
	}
	return Stat{State: f[0][0], PPID: ppid, Start: start}, nil
}
