// Package gopclntab reads a Go binary's .gopclntab, the table the Go
// runtime keeps for its own tracebacks, which even a stripped binary
// (-ldflags='-s -w') holds: its functions, for the frame names and probe
// targets of a binary without .symtab (resolver) and for the runtime
// functions the unwinder decodes (unwind); and the source frames of an
// address (Table.Frames: file, line and the calls inlined there), for the
// frames of a binary without DWARF (resolver).
//
// Written here:
//   - the text start (module.go): since Go 1.18 the table gives functions
//     as offsets from runtime.text, which is .text's start only when Go
//     linked the binary itself. Where the system linker did (cgo,
//     -linkmode=external), C start-up code comes first, and counting from
//     .text put every function 0x100 bytes early on this machine's builds.
//     The start is read from the runtime's module data
//     (runtime.firstmoduledata, in .go.module from Go 1.26, .noptrdata
//     before), found by its first words, which point at the table;
//   - the lookups of a Go 1.20+ table (ftab.go: functions, names, files and
//     lines; inline.go: the inline trees), as the runtime's traceback reads
//     them. debug/gosym, which reads older tables here (legacy.go), makes
//     every function's symbol up front (terraform's 102,000: 55 ms and
//     26 MB) and does not read inline trees. The inline trees are in the
//     functions' data (go:func.*), whose address is a word of the module
//     data: the one where the trees read (its place moved in Go 1.27).
//     Checked against runtime.CallersFrames and the fixtures' DWARF, and
//     read from Go 1.23 to 1.27 binaries;
//   - names as .symtab has them (abi.go): "·" becomes ".", and of a
//     function and its ABI wrapper, which share a name in the table, the
//     ABI0 one is "name.abi0".
package gopclntab

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// Func is one function of the table.
type Func struct {
	Name       string
	Entry, End uint64 // [Entry, End): ELF virtual addresses
}

// ErrNoTable means the file has no .gopclntab (not a Go binary, or one
// whose table is in a section without that name, as on some platforms).
var ErrNoTable = errors.New("no .gopclntab")

// Funcs returns the functions of Go binary f, by the table's order
// (ascending entries), those with an empty range left out.
func Funcs(f *elf.File) ([]Func, error) {
	t, err := Open(f)
	if err != nil {
		return nil, err
	}
	return t.Funcs(), nil
}

// checkCount refuses a table whose function count cannot fit in it (each
// entry of the function table takes at least 8 bytes): debug/gosym
// allocates the count's functions before it reads one, and a corrupt count
// ran the process out of memory, which no recover catches. The count is
// read in the byte order debug/gosym takes from the magic number, which
// need not be the file's.
func checkCount(f *elf.File, data []byte) error {
	if len(data) < 16 {
		return fmt.Errorf("read .gopclntab: %d bytes, too short for its header", len(data))
	}
	bo := tableOrder(data, f.ByteOrder)
	n := bo.Uint64(data[8:])
	if data[7] == 4 { // pointer size
		n = uint64(bo.Uint32(data[8:]))
	}
	if n > uint64(len(data))/8 {
		return fmt.Errorf("read .gopclntab: %d functions do not fit in its %d bytes", n, len(data))
	}
	return nil
}

// tableOrder returns the byte order in which the table's first word is a
// known magic number, as debug/gosym chooses it (little-endian first);
// else def.
func tableOrder(data []byte, def binary.ByteOrder) binary.ByteOrder {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch bo.Uint32(data) {
		case magic12, magic116, magic118, magic120:
			return bo
		}
	}
	return def
}
