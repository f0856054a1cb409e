package objfile

import (
	"github.com/probee/probee/internal/gopclntab"
)

// Every Go binary, a release build without DWARF (-ldflags=-w, or -s -w)
// too, has .gopclntab, from which the Go runtime prints its tracebacks:
// the file and line of every address and the calls inlined there. A Go
// binary's frames get both from it (internal/gopclntab) where its table
// gives inlined calls (Go 1.20 on), DWARF or not: lines in pprof and with
// --lines, and "fn (inlined)" frames. DWARF serves the addresses the table
// does not cover (a cgo binary's C code) and the binaries whose table has
// no inline trees; a table without inline trees and without DWARF gives
// the physical frame alone. Object.SourceAt chooses (sources.go); doc.go
// says where the table's answers differ from DWARF's, and why they stand.

// openGoTable returns the .gopclntab of the Go binary r (while it is the
// file first read); nil when it cannot be read.
func openGoTable(r fileRef) *gopclntab.Table {
	f, err := r.reopen()
	if err != nil {
		return nil
	}
	defer f.Close()
	t, err := gopclntab.Open(f.File)
	if err != nil {
		return nil
	}
	return t
}

// goSources returns the source frames of va from Go table t (nil: none).
func goSources(t *gopclntab.Table, va uint64) []Source {
	if t == nil {
		return nil
	}
	frames := t.Frames(va)
	out := make([]Source, len(frames))
	for i, f := range frames {
		out[i] = Source{Name: f.Func, Symbol: f.Func, File: f.File, Line: f.Line, Inline: f.Inline}
	}
	return out
}
