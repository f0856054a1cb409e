package objfile

import (
	"debug/elf"
	"fmt"

	"github.com/probee/probee/internal/safeelf"
)

// execFileOffset returns the file offset of the virtual address addr when an
// executable PT_LOAD segment holds it (a uprobe's place in the file).
func execFileOffset(f *elf.File, addr uint64) (uint64, bool) {
	seg, ok := safeelf.Find(safeelf.Loads(f), addr)
	if !ok || !seg.Exec() {
		return 0, false
	}
	return seg.FileOffset(addr), true
}

// Interpreter returns the program interpreter (ld.so) the ELF file at path
// asks for, "" when it is linked statically.
func Interpreter(path string) (string, error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return interpOf(f.File), nil
}

// LdsoDebug is ld.so's debugger interface (<link.h>): ld.so calls the empty
// function _dl_debug_state after it sets _r_debug.r_state to RT_ADD (it is
// about to map objects) and to RT_CONSISTENT (they are mapped and
// relocated, their constructors not yet run), at start-up and at every
// dlopen. gdb stops there to read the shared library list; probee's ld.so
// gate does the same to load unwind tables.
type LdsoDebug struct {
	StateOffset uint64 // file offset of _dl_debug_state (where the uprobe goes)
	StateAddr   uint64 // its virtual address
	RDebugAddr  uint64 // virtual address of _r_debug
}

// FindLdsoDebug reads the debugger interface symbols from the dynamic
// symbol table of the ld.so at path.
func FindLdsoDebug(path string) (LdsoDebug, error) {
	f, err := safeelf.Open(path)
	if err != nil {
		return LdsoDebug{}, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return LdsoDebug{}, fmt.Errorf("%s: read dynamic symbols: %w", path, err)
	}
	var d LdsoDebug
	for _, s := range syms {
		switch s.Name {
		case "_dl_debug_state":
			d.StateAddr = s.Value
		case "_r_debug":
			d.RDebugAddr = s.Value
		}
	}
	if d.StateAddr == 0 || d.RDebugAddr == 0 {
		return LdsoDebug{}, fmt.Errorf("%s: no _dl_debug_state or _r_debug in its dynamic symbols: not glibc's ld.so", path)
	}
	var ok bool
	if d.StateOffset, ok = execFileOffset(f.File, d.StateAddr); !ok {
		return LdsoDebug{}, fmt.Errorf("%s: _dl_debug_state 0x%x is in no executable segment", path, d.StateAddr)
	}
	return d, nil
}
