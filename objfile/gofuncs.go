package objfile

import (
	"debug/elf"
	"slices"

	"github.com/probee/probee/internal/gopclntab"
)

// A Go binary built for release (-ldflags='-s -w') has no .symtab and no
// DWARF: its function names are only in .gopclntab, the table the Go
// runtime keeps for its tracebacks. Such a binary gets its functions from
// there (internal/gopclntab reads it), as frame names and probe targets
// ("app:main.handle"): perf and bpftrace, which read .symtab and .dynsym,
// name none of its frames. The names are .symtab's
// (internal/gopclntab/abi.go), but for an assembly function without an
// ABI wrapper, which .symtab calls "name.abi0" and the table, like the
// runtime's tracebacks, "name". A table that cannot be read gives no
// functions, as a malformed symbol table does. Lines and inlined calls:
// gosource.go.

// addGoFuncs adds the functions of Go binary f's .gopclntab.
func (o *Object) addGoFuncs(f *elf.File) {
	funcs, err := gopclntab.Funcs(f)
	if err != nil {
		return
	}
	o.Funcs = slices.Grow(o.Funcs, len(funcs))
	for _, fn := range funcs {
		o.Funcs = append(o.Funcs, Symbol{Name: fn.Name, Addr: fn.Entry, Size: fn.End - fn.Entry,
			Global: true, from: fromPclntab})
	}
}
