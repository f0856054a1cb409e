// Package procmaps parses /proc/PID/maps, for the resolver (symbolizing a
// process's addresses) and for unwind (load biases of mapped files): one
// parser, fuzzed once. It also finds the file a mapping maps (File): the
// one place that turns a mapping's path, in whichever view the kernel
// printed it (the host's, a container's), into a path that opens that very
// file.
package procmaps

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unique"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64 // file offset of Start
	Dev        string // "fd:01"
	Inode      uint64
	Path       string // file path, "[vdso]", "[heap]", "" for anonymous
	Deleted    bool   // the file was deleted (" (deleted)" suffix, stripped from Path)
}

// DevName is a device's major:minor as /proc/PID/maps prints it ("fd:01"),
// the form of Mapping.Dev.
func DevName(major, minor uint32) string {
	return fmt.Sprintf("%02x:%02x", major, minor)
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// FileKey is a mapped file's identity as /proc/PID/maps and the kernel's
// mapping records show it: its device and inode.
type FileKey struct {
	Dev string
	Ino uint64
}

// FileKey is the identity of the file m maps.
func (m Mapping) FileKey() FileKey { return FileKey{m.Dev, m.Inode} }

// File reports whether the mapping is backed by a file path.
func (m Mapping) File() bool { return strings.HasPrefix(m.Path, "/") }

// Parse parses the text of /proc/PID/maps. Malformed lines are an error
// naming the line; an empty input is no mappings.
func Parse(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	lr := &io.LimitedReader{R: r, N: MaxMapsBytes + 1}
	sc := bufio.NewScanner(lr)
	// A line is a path at most (PATH_MAX, 4 KiB) and ~100 bytes more: the
	// buffer starts at a page and grows for longer ones. It started at
	// 64 KiB, made anew for every process read: 4.7 GB of a 5-minute
	// churn run's 20 GB of allocations (tests/bench/53-churn.sh).
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := parseLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("maps line %d %q: %w", n, line, err)
		}
		out = append(out, m)
	}
	if lr.N == 0 {
		return nil, tooLarge()
	}
	return out, sc.Err()
}

// MaxMapsBytes bounds the text of one process's maps: a process controls
// its mappings and their paths (up to 65,530 mappings, 4 KiB a path: 270
// MB of text, read for every process seen). A program with 65,530 mappings
// of ordinary paths has ~7 MB.
var MaxMapsBytes int64 = 64 << 20

// tooLarge is the error of maps past MaxMapsBytes.
func tooLarge() error {
	return fmt.Errorf("more than %d bytes of maps (procmaps.MaxMapsBytes): not read", MaxMapsBytes)
}

func parseLine(line string) (Mapping, error) {
	var m Mapping
	f := strings.Fields(line)
	if len(f) < 5 {
		return m, fmt.Errorf("want at least 5 fields, have %d", len(f))
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return m, fmt.Errorf("address range %q has no '-'", f[0])
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, err
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil {
		return m, err
	}
	if m.End < m.Start {
		return m, fmt.Errorf("range end before start")
	}
	if m.Offset, err = strconv.ParseUint(f[2], 16, 64); err != nil {
		return m, err
	}
	if m.Inode, err = strconv.ParseUint(f[4], 10, 64); err != nil {
		return m, err
	}
	if len(f[1]) != 4 {
		return m, fmt.Errorf("permissions %q: want 4 characters like r-xp", f[1])
	}
	m.Perms, m.Dev = Intern(f[1]), Intern(f[3])
	m.Path = pathField(line, f)
	if p, ok := strings.CutSuffix(m.Path, " (deleted)"); ok {
		m.Path, m.Deleted = p, true
	}
	m.Path = Intern(m.Path)
	return m, nil
}

// Intern returns the one shared copy of s (unique.Make). A snapshot of a
// process's mappings is kept as long as its stacks may need symbolizing,
// for every process a system-wide run saw: interned, its paths,
// permissions and devices are one copy each across processes, and a
// mapping holds no substring of the line it was parsed from.
func Intern(s string) string { return unique.Make(s).Value() }

// pathField returns everything after the inode field (paths may hold spaces).
func pathField(line string, f []string) string {
	if len(f) < 6 {
		return ""
	}
	rest := line
	for i := 0; i < 5; i++ {
		rest = strings.TrimLeft(rest, " \t")
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			return ""
		}
		rest = rest[j:]
	}
	return strings.TrimLeft(rest, " \t")
}

// Read reads and parses the maps file at path (e.g. /proc/PID/maps).
func Read(path string) ([]Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f)
}
