package unwind

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64 // file offset of Start
	Dev        string // "08:01"
	Inode      uint64
	Path       string // file path, "[vdso]", "[stack]", or "" (anonymous)
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// ReadMaps reads /proc/PID/maps.
func ReadMaps(pid int) ([]Mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read mappings of pid %d: %w (is the process still running?)", pid, err)
	}
	defer f.Close()
	return ParseMaps(f)
}

// ParseMaps parses the /proc/PID/maps format. Errors carry the line number.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, &FormatError{Section: "maps", Offset: int64(n), Msg: fmt.Sprintf("line %d %q: %v", n, line, err)}
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	return out, nil
}

// cutField returns the text up to the next space and the rest after it.
func cutField(s string) (string, string) {
	f, rest, _ := strings.Cut(s, " ")
	return f, rest
}

func parseMapsLine(line string) (Mapping, error) {
	var m Mapping
	rng, rest := cutField(line)
	perms, rest := cutField(rest)
	off, rest := cutField(rest)
	dev, rest := cutField(rest)
	inode, rest := cutField(rest)
	lo, hi, ok := strings.Cut(rng, "-")
	if !ok || len(perms) != 4 || dev == "" {
		return m, fmt.Errorf("want 'start-end perms offset dev inode [path]'")
	}
	var err [5]error
	m.Start, err[0] = strconv.ParseUint(lo, 16, 64)
	m.End, err[1] = strconv.ParseUint(hi, 16, 64)
	m.Offset, err[2] = strconv.ParseUint(off, 16, 64)
	m.Inode, err[3] = strconv.ParseUint(inode, 10, 64)
	for _, e := range err {
		if e != nil {
			return m, e
		}
	}
	if m.End < m.Start {
		return m, fmt.Errorf("end %#x before start %#x", m.End, m.Start)
	}
	m.Perms, m.Dev = perms, dev
	m.Path = strings.TrimLeft(rest, " ")
	return m, nil
}

const pageSize = 4096

// LoadBias returns the load bias of the file mapped by m (runtime address =
// ELF virtual address + bias), from the PT_LOAD segment whose file range
// holds the mapping's offset. The mapping maps file offset m.Offset at
// m.Start, and the segment maps file offset x to vaddr p_vaddr + (x -
// p_offset), so bias = m.Start - (p_vaddr - (p_offset - m.Offset)). Each
// segment is used on its own: p_vaddr - p_offset may differ between
// segments (lld layouts). When several segments share the mapped file page
// the one whose flags match the mapping's permissions wins (exact for
// executable mappings, which are the ones unwinding needs).
func LoadBias(loads []Segment, m Mapping) (uint64, error) {
	best := -1
	for i, s := range loads {
		lo := s.Offset &^ (pageSize - 1)
		if m.Offset < lo || m.Offset >= s.Offset+max(s.Filesz, 1) {
			continue
		}
		if best < 0 || flagScore(s.Flags, m.Perms) > flagScore(loads[best].Flags, m.Perms) {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("mapping %#x-%#x at file offset %#x of %s is in no PT_LOAD segment: the file on disk may differ from the mapped one", m.Start, m.End, m.Offset, m.Path)
	}
	s := loads[best]
	return m.Start - (s.Vaddr - (s.Offset - m.Offset)), nil
}

// flagScore rates how well segment flags (PF_X=1, PF_W=2) match perms.
func flagScore(f elf.ProgFlag, perms string) int {
	score := 0
	if (f&elf.PF_X != 0) == (len(perms) > 2 && perms[2] == 'x') {
		score += 2
	}
	if (f&elf.PF_W != 0) == (len(perms) > 1 && perms[1] == 'w') {
		score++
	}
	return score
}
