package symbolize

import (
	"fmt"
	"path/filepath"
)

// Frame is one symbolized address.
type Frame struct {
	Addr         uint64
	Function     string // demangled name (raw when not mangled); "" when unknown
	Symbol       string // raw symbol name
	Offset       uint64 // Addr minus the function's start
	Module       string // file path, "[vdso]"-style name, or "[ext4]" / "[kernel]" for kernel frames
	ModuleOffset uint64 // offset in the module's file (user) or 0
	Kernel       bool
	BuildID      string // hex build-id of Module, when known
	File         string // source file from DWARF, "" when unknown
	Line         int    // source line from DWARF, 0 when unknown
	Inline       bool   // an inlined call: Addr is the physical frame's, which follows it
	// VirtAddr is Addr in Module's ELF file, before any load bias: the
	// same in every process that maps the file, wherever it is loaded
	// (what addr2line takes); 0 when no readable ELF object holds Addr.
	VirtAddr uint64
}

// Name is the frame's display name: the function, else module+0xOFF (base
// name of the module), else "[unknown]".
func (f Frame) Name() string {
	switch {
	case f.Function != "":
		return f.Function
	case f.Module != "":
		return fmt.Sprintf("%s+0x%x", filepath.Base(f.Module), f.ModuleOffset)
	}
	return "[unknown]"
}
