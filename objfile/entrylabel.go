package objfile

import (
	"debug/elf"

	"github.com/probee/probee/unwind"
)

// A stripped executable has no symbol at its entry point (779 of 823
// programs in Debian's /usr/bin), so every one of its samples started at
// "prog+0x5860" where a program with symbols starts at _start. The entry
// point is the C runtime's _start in every toolchain (glibc's and musl's
// crt1.o, Rust's and Go's C-linked programs); the FDE that covers it in
// .eh_frame (unwind.FDEAt: found through .eh_frame_hdr's sorted table,
// without parsing the rest of .eh_frame) gives its extent. So an
// executable's entry point without a function symbol gets the label
// _start (labels.go) over that FDE. An
// executable is an ET_EXEC file, one with a program interpreter, or an
// ET_DYN file that needs no library (ld.so, static-pie programs); a
// library's entry point (libc.so.6 prints its version) is not _start.

// maxEntryFDE bounds the entry code named _start (glibc's is 38 bytes).
const maxEntryFDE = 256

// entryLabel returns the _start label of the entry point of f, read as
// o; ok is false when f is no executable or no FDE covers the entry.
func entryLabel(f *elf.File, o *Object) (Symbol, bool) {
	exe := f.Type == elf.ET_EXEC || o.Interp != "" || (f.Type == elf.ET_DYN && len(o.Needed) == 0)
	if !exe || f.Entry == 0 || f.Machine != elf.EM_X86_64 {
		return Symbol{}, false
	}
	start, end, ok := unwind.FDEAt(f, f.Entry)
	if !ok || start != f.Entry || end-start > maxEntryFDE {
		return Symbol{}, false
	}
	return Symbol{Name: "_start", Addr: start, Size: end - start}, true
}
