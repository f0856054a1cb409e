// Package resolver resolves probe specs to targets: a parsed
// probespec.Spec (Resolve) becomes the concrete places a probe attaches to
// — ELF functions (with file offsets for uprobes), source lines through
// DWARF line tables, USDT probes (resolver/usdt reads their notes), kernel
// functions and tracepoints — and the places that see a function's
// returns (ReturnAttachPoints). It writes the --list-probes listing of targets
// (WriteList, WriteJSON). The way back, addresses to frames, is package
// symbolize's, from the same per-run index of ELF objects (objfile.Index).
//
// Everything here is a pure function of files: the ELF objects, the
// ld.so.cache, /proc/PID/maps, tracefs and kallsyms text. Nothing is loaded
// into or attached to the kernel (that is bpf/'s job); mounting tracefs is
// left to the caller too.
//
// The ELF objects themselves (their symbols, PLT stubs, labels, debug
// files, demangled names, line tables and the per-run Index that reads
// each once) are package objfile's.
//
// Written in-house, on purpose:
//   - the ld.so.cache parser (no Go library reads glibc's cache format);
//   - the DT_NEEDED closure (glibc's search order: RPATH, RUNPATH with
//     $ORIGIN/$LIB/$PLATFORM, ld.so.cache, default directories);
//   - the parsers of tracefs' available_filter_functions and debugfs'
//     kprobe blacklist; kallsyms (internal/kallsyms) and /proc/PID/maps
//     (internal/procmaps) are read by parsers shared with symbolize and
//     unwind: tiny, and they must never panic.
//
// Globs use github.com/gobwas/glob. Demangled and regex patterns first
// test the raw name against the identifiers the pattern requires
// (prefilter.go) before asking for its demangled form
// (objfile.Object.DemangledName), so a glob such as
// "llvm::SmallVectorBase<*>::grow_pod*" demangles a handful of libLLVM's
// names, not all of them; Resolve leaves AttachPoint.Demangled empty
// (AttachPoint.DemangledName).
//
// # Decisions (documented once, here)
//
// Library names (TargetLib): a name containing ".so" is a file name and
// matches a library whose base name is that name or starts with it followed
// by "." (libssl.so.3 matches libssl.so.3 and libssl.so.3.0). Any other name
// is a stem: "c", "libc", "pthread". The stems tried are the name and, unless
// it starts with "lib", "lib"+name; a file matches a stem when its base name
// continues after the stem with ".so" (libc.so.6) or with "-" and a digit
// (libc-2.31.so, libLLVM-14.so.1). So libc never matches libcrypto, libcap
// or libc_malloc_debug. Without -p/-- CMD, libraries are looked up in the
// ld.so.cache (entries for this machine's architecture) and, when it has no
// match, the standard directories.
//
// Debug files (objfile): a symbol found only in a separate debug file
// (libc6-dbg, a -dbgsym package) is a target like any other;
// AttachPoint.SymbolFrom names the file it came from, so --list-probes -v shows
// when a match exists only because that file is installed.
//
// Functions: the functions of objfile.Object (defined STT_FUNC and
// STT_GNU_IFUNC symbols, or a stripped Go binary's .gopclntab). Symbols at
// one address are one target (aliases such as malloc/__libc_malloc): it is
// reported under the name that matched, preferring, when several matched,
// objfile.BetterName's choice. A probe on a GNU_IFUNC symbol fires in the
// IFUNC resolver, as with every uprobe tool.
//
// Fragments: demangled matches skip the pieces of another function
// (objfile.Symbol.Fragment: ".cold", ".part.N"); exact, glob and regex
// matches on the raw name still see them.
//
// USDT probes (usdtprobes.go): a usdt spec searches the files a uprobe
// spec with its target would (the path, the library, the -p process's
// mapped files, the command's DT_NEEDED closure, else every library of the
// ld.so.cache), reading only their .note.stapsdt (and build-id), not their
// symbols. Every probe whose provider and name match the spec's globs (an
// empty provider matching all) is one AttachPoint of kind USDT, Provider and
// Name set, holding all its sites (usdt.Site: address, file offset,
// semaphore and its file offset, the argument string and its parsed
// usdt.Arg values, kept for argument weights); AttachPoint.Address is 0.
//
// Source lines: every is_stmt address of the line is a target
// (objfile.Object.LineAddrs: inlined copies, split hot/cold code). Files
// match by path suffix on "/" boundaries; two different files matching is
// an error listing them.
package resolver
