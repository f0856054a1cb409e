package unwind

import (
	"debug/elf"
	"fmt"
	"io"

	"github.com/probee/probee/internal/procmaps"
)

// ReadMaps reads /proc/PID/maps.
func ReadMaps(pid int) ([]procmaps.Mapping, error) {
	ms, err := procmaps.Read(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read mappings of pid %d: %w (is the process still running?)", pid, err)
	}
	return ms, nil
}

// ParseMaps parses the /proc/PID/maps format. Errors name the line.
func ParseMaps(r io.Reader) ([]procmaps.Mapping, error) { return procmaps.Parse(r) }

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
func LoadBias(loads []Segment, m procmaps.Mapping) (uint64, error) {
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
