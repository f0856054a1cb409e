package resolver

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/probespec"
)

// lineHit is one address of a source line.
type lineHit struct {
	file string
	addr uint64
}

// resolveSource turns "file:line" into one target per address of the line.
func (r *Resolver) resolveSource(spec probespec.Spec, objs []*Object, where string) ([]Target, error) {
	var ts []Target
	files := map[string]bool{}
	var near []int
	for _, o := range objs {
		hits, nearby, err := lineAddrs(o, spec.Source.File, spec.Source.Line)
		if err != nil {
			return nil, err
		}
		near = append(near, nearby...)
		for _, h := range hits {
			files[h.file] = true
			ts = append(ts, o.lineTarget(h, spec))
		}
	}
	if len(files) > 1 {
		return nil, fmt.Errorf("source file %q is ambiguous, it matches: %s: give more of its path",
			spec.Source.File, strings.Join(sortedKeys(files), ", "))
	}
	if len(ts) == 0 {
		msg := fmt.Sprintf("no code at %s:%d in %s", spec.Source.File, spec.Source.Line, where)
		if len(near) > 0 {
			msg += fmt.Sprintf("; lines with code nearby: %s", nearestLines(near, spec.Source.Line))
		} else {
			msg += noLinesHint(objs)
		}
		return nil, errors.New(msg)
	}
	return ts, nil
}

// noLinesHint says why no line table names a file: the objects were built
// without line tables (-g), or, for Go binaries, without DWARF (-w): their
// .gopclntab gives each address a line, but not where a line's statements
// start (DWARF's is_stmt), so probes at a line are not placed from it.
func noLinesHint(objs []*Object) string {
	goOnly := len(objs) > 0
	for _, o := range objs {
		goOnly = goOnly && o.Go && !o.hasDWARF()
	}
	if goOnly {
		return " (a Go binary without DWARF, built with -ldflags=-w or -s -w, has no line table for probes: build it without -w, or probe a function)"
	}
	return " (no line table names that file: was it built with -g?)"
}

// hasDWARF reports whether o or its debug file has a line table.
func (o *Object) hasDWARF() bool {
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

// lineTarget names the function around a line address.
func (o *Object) lineTarget(h lineHit, spec probespec.Spec) Target {
	t := Target{Kind: probespec.Uprobe, Path: o.Path, BuildID: o.BuildID, Address: h.addr,
		SourceFile: h.file, Line: spec.Source.Line, SymbolFrom: o.Path}
	if i := o.funcAt(h.addr); i >= 0 {
		s := o.Funcs[i]
		t.Symbol, t.Address, t.Offset, t.Size = s.Name, s.Addr, h.addr-s.Addr, s.Size
		if s.from == fromDebug {
			t.SymbolFrom = o.DebugFile
		}
	}
	t.FileOffset, _ = o.FileOffset(t.Address)
	return t
}

// lineAddrs returns the is_stmt addresses of want:line in o's line tables
// (its own, or its debug file's), and the lines with code in files that
// match want (for the error message).
func lineAddrs(o *Object, want string, line int) (hits []lineHit, near []int, err error) {
	for _, r := range o.files() {
		d, err := openDWARF(r)
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

// openDWARF returns the DWARF of the file r (while it is the file first
// read), nil when it has no .debug_info or no .debug_line with contents (a
// stripped file, or a debug file's placeholder). The DWARF budgets of
// internal/safeelf apply.
func openDWARF(r fileRef) (*dwarf.Data, error) {
	f, err := r.reopen()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var has bool
	_ = safeelf.Guard(r.path, func() error {
		has = f.Section(".debug_info") != nil && hasDWARFLines(f.File)
		return nil
	})
	if !has {
		return nil, nil
	}
	return safeelf.DWARF(r.path, f.File)
}

func hasDWARFLines(f *elf.File) bool {
	s := f.Section(".debug_line")
	return s != nil && s.Type != elf.SHT_NOBITS
}

// scanLines walks every compile unit's line table.
func scanLines(d *dwarf.Data, want string, line int) (hits []lineHit, near []int) {
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
func scanUnit(lr *dwarf.LineReader, compDir, want string, line int) (hits []lineHit, near []int) {
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
			hits = append(hits, lineHit{file: filepath.Clean(fullName(e.File.Name, compDir)), addr: e.Address})
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

// nearestLines lists up to 3 lines with code before and after line.
func nearestLines(lines []int, line int) string {
	sort.Ints(lines)
	var uniq []int
	for i, l := range lines {
		if i == 0 || l != lines[i-1] {
			uniq = append(uniq, l)
		}
	}
	i := sort.SearchInts(uniq, line)
	lo, hi := max(0, i-3), min(len(uniq), i+3)
	var s []string
	for _, l := range uniq[lo:hi] {
		s = append(s, fmt.Sprint(l))
	}
	return strings.Join(s, ", ")
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
