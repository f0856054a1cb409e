package resolver

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/probee/probee/objfile"
	"github.com/probee/probee/probespec"
)

// resolveSource turns "file:line" into one target per address of the line
// (objfile.Object.LineAddrs: every is_stmt address of the line).
func (r *Resolver) resolveSource(spec probespec.Spec, objs []*objfile.Object, where string) ([]AttachPoint, error) {
	var ts []AttachPoint
	files := map[string]bool{}
	var near []int
	for _, o := range objs {
		hits, nearby, err := o.LineAddrs(spec.Source.File, spec.Source.Line)
		if err != nil {
			return nil, err
		}
		near = append(near, nearby...)
		for _, h := range hits {
			files[h.File] = true
			ts = append(ts, lineTarget(o, h, spec))
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
func noLinesHint(objs []*objfile.Object) string {
	goOnly := len(objs) > 0
	for _, o := range objs {
		goOnly = goOnly && o.Go && !o.HasLineTable()
	}
	if goOnly {
		return " (a Go binary without DWARF, built with -ldflags=-w or -s -w, has no line table for probes: build it without -w, or probe a function)"
	}
	return " (no line table names that file: was it built with -g?)"
}

// lineTarget names the function around a line address of o.
func lineTarget(o *objfile.Object, h objfile.LineAddr, spec probespec.Spec) AttachPoint {
	t := AttachPoint{Kind: probespec.Uprobe, Path: o.Path, BuildID: o.BuildID, Address: h.Addr,
		SourceFile: h.File, Line: spec.Source.Line, SymbolFrom: o.Path}
	if i := o.FuncAt(h.Addr); i >= 0 {
		s := o.Funcs[i]
		t.Symbol, t.Address, t.Offset, t.Size = s.Name, s.Addr, h.Addr-s.Addr, s.Size
		if s.FromDebugFile() {
			t.SymbolFrom = o.DebugFile
		}
	}
	t.FileOffset, _ = o.FileOffset(t.Address)
	return t
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
