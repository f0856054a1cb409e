package objfile

import (
	"debug/dwarf"
	"debug/elf"
	"path/filepath"
	"strings"

	"github.com/probee/probee/internal/safeelf"
)

// Source lines to addresses: the line tables of an object and of its
// separate debug file, as a "file:line" probe spec needs them. Only
// is_stmt rows that are not end_sequence count, and consecutive rows of
// the same line within one sequence collapse into the first. Files match
// by path suffix on "/" boundaries.

// LineAddr is one address of a source line, in the file named File (the
// line table's path of it).
type LineAddr struct {
	File string
	Addr uint64
}

// LineAddrs returns the is_stmt addresses of want:line in o's line tables
// (its own, or its debug file's), and the lines with code in files that
// match want (for an error message).
func (o *Object) LineAddrs(want string, line int) (hits []LineAddr, near []int, err error) {
	for _, r := range o.files() {
		d, _, err := openDWARF(r)
		if err != nil || d == nil {
			continue
		}
		err = safeelf.Guard(r.path, func() error {
			hits, near = scanLines(d, want, line)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if len(hits) > 0 || len(near) > 0 {
			return hits, near, nil
		}
	}
	return nil, nil, nil
}

// HasLineTable reports whether o or its debug file has a line table
// (.debug_line with contents).
func (o *Object) HasLineTable() bool {
	for _, r := range o.files() {
		if f, err := r.reopen(); err == nil {
			ok := hasDWARFLines(f.File)
			f.Close()
			if ok {
				return true
			}
		}
	}
	return false
}

// openDWARF returns the DWARF of the file r (while it is the file first
// read) and the size of its sections (dwarfBytes), nil when it has no
// .debug_info or no .debug_line with contents (a stripped file, or a
// debug file's placeholder). The DWARF budgets of internal/safeelf apply.
func openDWARF(r fileRef) (*dwarf.Data, int64, error) {
	f, err := r.reopen()
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var has bool
	_ = safeelf.Guard(r.path, func() error {
		has = f.Section(".debug_info") != nil && hasDWARFLines(f.File)
		return nil
	})
	if !has {
		return nil, 0, nil
	}
	d, err := safeelf.DWARF(r.path, f.File)
	return d, dwarfBytes(f.File), err
}

// dwarfBytes is the size of f's DWARF sections as its section headers
// give it (decompressed for SHF_COMPRESSED ones).
func dwarfBytes(f *elf.File) int64 {
	var n int64
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			n += int64(min(s.Size, 1<<40))
		}
	}
	return n
}

func hasDWARFLines(f *elf.File) bool {
	s := f.Section(".debug_line")
	return s != nil && s.Type != elf.SHT_NOBITS
}

// scanLines walks every compile unit's line table.
func scanLines(d *dwarf.Data, want string, line int) (hits []LineAddr, near []int) {
	want = filepath.Clean(want)
	rd := d.Reader()
	for {
		cu, err := rd.Next()
		if err != nil || cu == nil {
			return hits, near
		}
		rd.SkipChildren()
		if cu.Tag != dwarf.TagCompileUnit {
			continue
		}
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		dir, _ := cu.Val(dwarf.AttrCompDir).(string)
		h, n := scanUnit(lr, dir, want, line)
		hits, near = append(hits, h...), append(near, n...)
	}
}

// scanUnit collects the first address of each run of rows for the line
// within a sequence.
func scanUnit(lr *dwarf.LineReader, compDir, want string, line int) (hits []LineAddr, near []int) {
	var e dwarf.LineEntry
	inRun := false
	matches := map[*dwarf.LineFile]bool{} // per file entry, not per row
	match := func(f *dwarf.LineFile) bool {
		m, ok := matches[f]
		if !ok {
			m = pathSuffix(fullName(f.Name, compDir), want)
			matches[f] = m
		}
		return m
	}
	for {
		if err := lr.Next(&e); err != nil {
			return hits, near // io.EOF or a corrupt table: keep what we have
		}
		if e.EndSequence {
			inRun = false
			continue
		}
		if e.File == nil || !match(e.File) {
			inRun = false
			continue
		}
		if e.Line != line {
			if e.IsStmt {
				near = append(near, e.Line)
			}
			inRun = false
			continue
		}
		if e.IsStmt && !inRun {
			hits = append(hits, LineAddr{File: filepath.Clean(fullName(e.File.Name, compDir)), Addr: e.Address})
		}
		inRun = true
	}
}

// fullName joins a line-table file name to the unit's directory. debug/dwarf
// already did for DWARF 4 and for DWARF 5 files of directory 0 (the unit's
// directory itself): a relative name that starts with compDir is not
// joined again (glibc's units have relative directories such as "./intl").
func fullName(name, compDir string) string {
	if filepath.IsAbs(name) || compDir == "" {
		return name
	}
	if c := filepath.Clean(compDir); c != "." && strings.HasPrefix(filepath.Clean(name), c+"/") {
		return name
	}
	return filepath.Join(compDir, name)
}

// pathSuffix reports whether name is want or ends with "/"+want.
func pathSuffix(name, want string) bool {
	name = filepath.Clean(name)
	return name == want || strings.HasSuffix(name, "/"+want)
}
