// Package objfile is probee's model of one ELF object file, shaped like
// the standard library's debug/elf: an object's function symbols (Object,
// Symbol), its PLT stubs and code labels, its separate debug file, its
// demangled names, its source lines and inlined calls (DWARF, or a Go
// binary's .gopclntab), and the per-run Index that reads each file once.
// Both directions of probee's symbol work stand on it: package resolver
// turns specs into places in these objects, package symbolize turns
// addresses in them back into frames.
//
// Everything here is a pure function of files. ELF headers, sections and
// DWARF come from debug/elf and debug/dwarf, always opened and read behind
// internal/safeelf's panic-to-error guard because debug/elf has panicked
// on hostile input in the past; demangling uses
// github.com/ianlancetaylor/demangle (C++, Rust legacy and v0).
//
// The Index reads each ELF file once per run, keyed by internal/fileid's
// identity (the build-id, else device, inode, size and mtime; unwind's
// table cache uses the same key): copies of one build at several paths
// are one read, each returned with its own path, sharing its symbols,
// names and DWARF. It holds at most MaxSymbols symbols; a symbolizer that
// knows which files are no longer mapped lets go of them (Index.Sweep).
//
// Written in-house, on purpose:
//   - the symbol and dynamic table reader (elfsyms.go). debug/elf's
//     Symbols and DynamicSymbols allocate an elf.Symbol and a string for
//     every symbol (libLLVM has 45000) and DynString re-reads the dynamic
//     string table (3 MB in libLLVM) on each of the four calls: loading
//     libLLVM took longer than bpftrace -l takes to list it. The reader
//     reads each table once, keeps only function records, and cuts their
//     names from one copy of the string table. It checks every offset and
//     index the file gives, and a malformed table yields no symbols, as
//     debug/elf's error did (FuzzSymbolTables compares the two on
//     arbitrary input, from a committed seed corpus);
//   - PLT stub names (plt.go): debug/elf gives relocations per section but
//     no stub addresses; frames in a stub are named "function@plt" as perf
//     and objdump name them, and stubs are never probe targets;
//   - code labels (labels.go), a stripped program's _start
//     (entrylabel.go, which finds the FDE covering the entry point through
//     .eh_frame_hdr's table with unwind.FDEAt, without parsing all of
//     .eh_frame) and libc's signal trampoline __restore_rt (sigreturn.go,
//     by its code near sigaction): frame names where no function symbol
//     covers a pc (Object.SymbolAt), never probe targets;
//   - the address lookup of source lines and inlined calls (dwarfsym.go,
//     inline.go): debug/dwarf has no inline-aware address lookup.
//
// # Decisions (documented once, here)
//
// Functions: only defined STT_FUNC and STT_GNU_IFUNC symbols in an
// executable section with a non-zero address count; a Go binary without
// .symtab (a release build, -s -w) takes its functions from .gopclntab
// instead (gofuncs.go, internal/gopclntab), each sized up to the next.
// Of several symbols at one address (aliases such as malloc/__libc_malloc)
// BetterName prefers a symbol with a size, then a global name, then fewer
// leading underscores, then the shorter, then the alphabetically first.
//
// Fragments: symbols whose raw name carries a ".cold", ".warm" or
// ".part.N" suffix are pieces of another function, not entry points
// (Symbol.Fragment; Object.ColdParts lists a function's .cold parts).
// Clones such as ".isra.N" and ".constprop.N" are real entry points.
//
// Debug files: separate debug files found by build-id under
// <root>/usr/lib/debug/.build-id/xx/yyyy.debug (or by .gnu_debuglink under
// /usr/lib/debug, or beside the file in .debug/, opened without following
// links) ARE consulted when present; their .symtab adds the local
// functions a stripped library lacks (Symbol.FromDebugFile) and their
// DWARF serves line lookups both ways. Whatever is read from a file after
// its symbols (DWARF, .gopclntab) is read only while its path still opens
// that very file.
//
// Demangling is lazy (Object.DemangledName, cached per object and shared
// by its copies): only names a matcher needs, symbolized frames and
// printed targets are demangled. Rust v0's "<crate::Type>::method" for an
// inherent method is spelled as legacy mangling spells it,
// "crate::Type::method", so one pattern matches both.
//
// Source lines (lines.go, dwarfsym.go, inline.go, gosource.go): where an
// object or its separate debug file has .debug_info and .debug_line, a
// line gives its is_stmt addresses (Object.LineAddrs: every address of the
// line, inlined copies and split hot/cold code included, consecutive rows
// of the same line within one sequence collapsed into the first), and an
// address gives the file and line of each inlined call there
// (DW_TAG_inlined_subroutine), innermost first, then of the physical
// function, with the line of the outermost call site
// (DW_AT_call_file/DW_AT_call_line), as binutils' addr2line -i prints them
// (Object.SourceAt). DWARF is parsed lazily and kept with its Object: the
// first lookup indexes the compile units' address ranges (their top
// entries only), and a unit's line table and function tree are read when
// an address first falls in it; results are cached per address; a caller
// that is done with a file lets go of it (Object.ReleaseDWARF). File names
// are joined to a relative unit directory once (glibc's "./libio");
// binutils 2.40 joins it twice.
//
// Go binaries (gosource.go): a Go binary's sources come from its
// .gopclntab, the table the Go runtime's tracebacks read, whenever it
// opens and gives inlined calls (Go 1.20 on: gopclntab.Table.Inlines),
// DWARF or not; DWARF serves what the table does not cover (a cgo
// binary's C code), and the whole binary when the table has no inline
// trees (older than Go 1.20, or its functions' data not found). The table
// is kept across ReleaseDWARF (sources.go says why); DWARF kept to be let
// go of each fold was read again at the next, 32% of the allocations of a
// 5-minute system-wide run tracing one Go program. A release build without
// DWARF (-ldflags=-w, or -s -w) gets the same frames as its unstripped
// build. The table's answers are DWARF's at every fifth byte of the Go
// fixtures (TestGoTableMatchesDWARF), and at every byte of probee's own
// binary and the churn generator (5.6M and 1M addresses) every inlined
// call has DWARF's name, file and line. Where the two differ, the table
// wins, being what the program's own tracebacks, runtime/pprof profiles
// and go tool objdump say of those addresses, and what a release build
// gets anyway:
//   - the padding after a function (int3, never a return address) has no
//     DWARF subprogram; the table gives it to the function before, as the
//     functions of a binary without .symtab are sized up to the next;
//   - a physical function's name: the table's is .symtab's (".abi0" of an
//     assembly function with a wrapper, "." for the "·" of compiler-made
//     names such as "type:.eq.T·7"), which frames show anyway;
//   - code the compiler wrote: where DWARF has no line (the prologue of
//     type:.eq functions and wrappers) the table says "<autogenerated>:1";
//     in a package's init, a call inlined to initialize a variable is
//     called, per DWARF, from the variable's line (encoding/xml's
//     read.go:316), per the table from "<autogenerated>:1";
//   - at 8 of probee's 5.6M addresses, the NOP marking the site of an
//     inlined call, DWARF gives the line before the call's (iface.go:681
//     for 682).
package objfile
