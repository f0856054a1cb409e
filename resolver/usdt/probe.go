package usdt

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
)

// Probe is one USDT probe of a file, provider:name, with every place it
// fires.
type Probe struct {
	Provider string
	Name     string
	Sites    []Site // sorted by Address, one per address
}

// Site is one place a probe fires: one note of .note.stapsdt.
type Site struct {
	// Address is the virtual address of the probe's nop, after the
	// .stapsdt.base adjustment; FileOffset is its offset in the file,
	// where the uprobe goes.
	Address    uint64 `json:"address"`
	FileOffset uint64 `json:"file_offset"`
	// Semaphore is the virtual address of the probe's semaphore (an
	// unsigned short the program tests before it evaluates the arguments),
	// 0 when it has none; SemaphoreOffset is its file offset, the kernel's
	// uprobe reference counter offset (ref_ctr_offset).
	Semaphore       uint64 `json:"semaphore,omitempty"`
	SemaphoreOffset uint64 `json:"semaphore_offset,omitempty"`
	// ArgText is the argument string as the note writes it; Args is it
	// parsed, nil when ArgsErr says why it could not be.
	ArgText string `json:"args"`
	Args    []Arg  `json:"arguments,omitempty"`
	ArgsErr string `json:"args_error,omitempty"`
}

// Note owner and type of a version-3 SystemTap SDT note, the only version
// sys/sdt.h has written since 2010.
const (
	noteOwner = "stapsdt"
	noteType  = 3
)

// maxSection bounds the .note.stapsdt read (OpenJDK's libjvm.so has 52 KiB).
const maxSection = 64 << 20

// Read returns the USDT probes of f, sorted by provider and name; a file
// without .note.stapsdt has none. Notes of other owners or types are
// skipped; a malformed one is an error naming it.
func Read(f *elf.File) ([]Probe, error) {
	var probes []Probe
	err := safeelf.Guard("(usdt notes)", func() error {
		notes, err := elfnote.SectionNotes(f, ".note.stapsdt", maxSection)
		if err != nil || len(notes) == 0 {
			return err
		}
		base, hasBase := uint64(0), false
		if s := f.Section(".stapsdt.base"); s != nil {
			base, hasBase = s.Addr, true
		}
		probes, err = probesOf(notes, layout{base, hasBase, safeelf.Loads(f)})
		return err
	})
	return probes, err
}

// Open reads the USDT probes of the ELF file at path.
func Open(path string) ([]Probe, error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	probes, err := Read(f.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return probes, nil
}

// NewFile reads the USDT probes of the ELF file in r.
func NewFile(name string, r io.ReaderAt) ([]Probe, error) {
	f, err := safeelf.NewFile(name, r)
	if err != nil {
		return nil, err
	}
	return Read(f)
}

// layout is what the notes' addresses are resolved against.
type layout struct {
	base    uint64 // address of the .stapsdt.base section
	hasBase bool
	loads   []safeelf.Segment
}

// probesOf decodes the SDT notes among notes and groups their sites by
// probe.
func probesOf(notes []elfnote.Note, l layout) ([]Probe, error) {
	byName := map[[2]string]int{}
	var probes []Probe
	for i, n := range notes {
		if n.Name != noteOwner || n.Type != noteType {
			continue
		}
		provider, name, site, err := decodeNote(n.Desc, l)
		if err != nil {
			return nil, fmt.Errorf("note %d of .note.stapsdt: %w", i, err)
		}
		k := [2]string{provider, name}
		j, ok := byName[k]
		if !ok {
			j = len(probes)
			byName[k] = j
			probes = append(probes, Probe{Provider: provider, Name: name})
		}
		probes[j].Sites = append(probes[j].Sites, site)
	}
	for i := range probes {
		probes[i].Sites = sortSites(probes[i].Sites)
	}
	slices.SortFunc(probes, func(a, b Probe) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Name, b.Name))
	})
	return probes, nil
}

// sortSites sorts sites by address and keeps the first of each address.
func sortSites(sites []Site) []Site {
	slices.SortStableFunc(sites, func(a, b Site) int { return cmp.Compare(a.Address, b.Address) })
	return slices.CompactFunc(sites, func(a, b Site) bool { return a.Address == b.Address })
}

// decodeNote reads one note's descriptor: the probe's address, the
// .stapsdt.base address the note was linked with and the semaphore's
// address (8 bytes each), then the provider, name and argument string,
// each NUL-terminated.
func decodeNote(desc []byte, l layout) (provider, name string, s Site, err error) {
	if len(desc) < 3*8 {
		return "", "", s, fmt.Errorf("descriptor of %d bytes, want at least 24", len(desc))
	}
	pc, noteBase, sem := binary.LittleEndian.Uint64(desc), binary.LittleEndian.Uint64(desc[8:]), binary.LittleEndian.Uint64(desc[16:])
	strs, err := cStrings(desc[24:], 3)
	if err != nil {
		return "", "", s, err
	}
	provider, name, s.ArgText = strs[0], strs[1], strs[2]
	if provider == "" || name == "" {
		return "", "", s, fmt.Errorf("empty provider or probe name")
	}
	if err := s.place(pc, noteBase, sem, l); err != nil {
		return "", "", s, fmt.Errorf("%s:%s: %w", provider, name, err)
	}
	if s.Args, err = ParseArgs(s.ArgText); err != nil {
		s.ArgsErr = err.Error()
	}
	return provider, name, s, nil
}

// place sets the site's addresses and file offsets. A file whose
// .stapsdt.base is not where the note says was moved after linking
// (prelink moves every section by one amount): the probe and its
// semaphore moved by as much.
func (s *Site) place(pc, noteBase, sem uint64, l layout) error {
	if l.hasBase && noteBase != 0 {
		delta := l.base - noteBase
		pc += delta
		if sem != 0 {
			sem += delta
		}
	}
	seg, ok := safeelf.Find(l.loads, pc)
	if !ok || !seg.Exec() {
		return fmt.Errorf("probe address %#x is in no executable PT_LOAD segment", pc)
	}
	s.Address, s.FileOffset = pc, seg.FileOffset(pc)
	if sem == 0 {
		return nil
	}
	seg, ok = safeelf.Find(l.loads, sem)
	if !ok || !seg.Holds(sem, 2) || seg.Flags&elf.PF_W == 0 {
		return fmt.Errorf("semaphore %#x is in no writable file-backed PT_LOAD segment", sem)
	}
	s.Semaphore, s.SemaphoreOffset = sem, seg.FileOffset(sem)
	return nil
}

// cStrings cuts n NUL-terminated strings from the start of b.
func cStrings(b []byte, n int) ([]string, error) {
	out := make([]string, 0, n)
	for range n {
		i := slices.Index(b, 0)
		if i < 0 {
			return nil, fmt.Errorf("descriptor ends inside string %d of 3 (provider, name, arguments)", len(out)+1)
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out, nil
}
