package output

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// locKey identifies a Location: mapping, address and its lines (function
// id and line number pairs, innermost first, as bytes).
type locKey struct {
	m     *profile.Mapping
	addr  uint64
	lines string
}

// location returns the Location of a frame group, creating it once per
// distinct mapping, address and lines.
func (b *pprofBuilder) location(g frameGroup) *profile.Location {
	phys := g.frames[0]
	m := b.mapping(phys, g.kernel)
	lines := make([]profile.Line, 0, len(g.frames))
	kb := b.scratch[:0]
	for i := len(g.frames) - 1; i >= 0; i-- { // innermost first
		f := g.frames[i]
		fn := b.function(f, g.kernel)
		lines = append(lines, profile.Line{Function: fn, Line: int64(f.Line)})
		kb = binary.AppendUvarint(kb, fn.ID)
		kb = binary.AppendVarint(kb, int64(f.Line))
	}
	b.scratch = kb
	if loc, ok := b.locations[locKey{m, phys.Address, string(kb)}]; ok {
		return loc
	}
	loc := &profile.Location{ID: uint64(len(b.prof.Location) + 1), Mapping: m, Address: phys.Address, Line: lines}
	b.locations[locKey{m, phys.Address, string(kb)}] = loc
	b.prof.Location = append(b.prof.Location, loc)
	return loc
}

type funcKey struct {
	kernel     bool
	name, file string
}

type mapKey struct {
	file, buildID string
	hasBias       bool
	bias          uint64
}

// function returns the Function named like f, with its source file.
func (b *pprofBuilder) function(f *Frame, kernel bool) *profile.Function {
	name := f.Name
	if name == "" {
		name = FrameName(Frame{Module: f.Module, Offset: f.Offset, Address: f.Address}, false, false)
	}
	key := funcKey{kernel, name, f.File}
	if fn, ok := b.functions[key]; ok {
		return fn
	}
	name = cleanName(name)
	fn := &profile.Function{ID: uint64(len(b.prof.Function) + 1), Name: name, SystemName: name,
		Filename: cleanName(f.File)}
	b.functions[key] = fn
	b.prof.Function = append(b.prof.Function, fn)
	return fn
}

// mapping returns the Mapping of f's module, or nil when the module is
// unknown for a user frame. Mappings are keyed by module, build-id and
// bias (Address - Offset), so that each maps its addresses to correct file
// offsets: a frame symbolized from its file has the address in the file
// (one mapping for every process), one whose file was unreadable the
// process's address (a mapping per load address).
func (b *pprofBuilder) mapping(f *Frame, kernel bool) *profile.Mapping {
	file := f.Module
	if kernel {
		file = kernelModule(f.Module)
	}
	if file == "" {
		return nil
	}
	bias, hasBias := uint64(0), f.Offset != 0 && f.Address >= f.Offset
	if hasBias {
		bias = f.Address - f.Offset
	}
	key := mapKey{file, f.BuildID, hasBias, bias}
	m, ok := b.mappings[key]
	if !ok {
		m = &profile.Mapping{ID: uint64(len(b.prof.Mapping) + 1), File: file, BuildID: f.BuildID,
			HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
		b.mappings[key] = m
		b.prof.Mapping = append(b.prof.Mapping, m)
	}
	if f.Address != 0 {
		if m.Limit == 0 || f.Address < m.Start {
			m.Start = f.Address
		}
		m.Limit = max(m.Limit, f.Address+1)
		if hasBias {
			m.Offset = m.Start - bias
		}
	}
	return m
}

// cleanName is Sanitize without the ';' rule (pprof has no separator): it
// keeps names printable, valid UTF-8 text. Empty stays empty.
func cleanName(s string) string {
	if s == "" || !strings.ContainsFunc(s, needsSanitize) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// orderMappings puts the main executable first (pprof reports its name as
// the profile's "File"), then shared libraries, then kernel mappings, each
// in order of first use, and renumbers them.
func orderMappings(ms []*profile.Mapping) {
	rank := func(m *profile.Mapping) int {
		switch {
		case strings.HasPrefix(m.File, "["):
			return 2
		case strings.Contains(filepath.Base(m.File), ".so"):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(ms, func(a, b *profile.Mapping) int { return rank(a) - rank(b) })
	for i, m := range ms {
		m.ID = uint64(i + 1)
	}
}

// kernelModule names the pprof mapping of a kernel frame's module.
func kernelModule(module string) string {
	switch {
	case module == "" || module == "vmlinux" || module == "kernel":
		return kernelMapping
	case strings.HasPrefix(module, "["):
		return module
	}
	return "[" + filepath.Base(module) + "]"
}
