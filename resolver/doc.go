// Package resolver owns probee's symbol index in both directions.
//
// Forward (Resolve): a parsed probespec.Spec becomes the concrete places a
// probe attaches to — ELF functions (with file offsets for uprobes), source
// lines through DWARF line tables, USDT probes (resolver/usdt reads their
// notes), kernel functions and tracepoints.
// Backward (Symbolizer): addresses captured in stacks become frame names,
// from the same per-run index of ELF objects and /proc/kallsyms.
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
//   - the kallsyms and perf map parsers, and the /proc/PID/maps one shared
//     with unwind (internal/procmaps): tiny, and they must never panic.
//
// Globs use github.com/gobwas/glob. Demangled and regex patterns first
// test the raw name against the identifiers the pattern requires
// (prefilter.go) before asking for its demangled form
// (objfile.Object.DemangledName), so a glob such as
// "llvm::SmallVectorBase<*>::grow_pod*" demangles a handful of libLLVM's
// names, not all of them; Resolve leaves Target.Demangled empty
// (Target.DemangledName).
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
// Target.SymbolFrom names the file it came from, so --list-probes -v shows
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
// empty provider matching all) is one Target of kind USDT, Provider and
// Name set, holding all its sites (usdt.Site: address, file offset,
// semaphore and its file offset, the argument string and its parsed
// usdt.Arg values, kept for argument weights); Target.Address is 0.
//
// Source lines: every is_stmt address of the line is a target
// (objfile.Object.LineAddrs: inlined copies, split hot/cold code). Files
// match by path suffix on "/" boundaries; two different files matching is
// an error listing them.
//
// Frames: Symbolizer.Frames looks up exactly the addresses given. Callers
// pass pc-1 for return addresses (every frame but the leaf) themselves.
// Unsymbolized addresses are named module+0xOFF, OFF being the file offset
// (as in /proc/PID/maps), never a bare [unknown] when the module is known.
// A frame in an ELF file also carries its address in that file (VirtAddr,
// before any load bias): the same in every process, whatever its load
// address. AppendFrameRefs, for callers that symbolize many stacks of many
// processes (a profile), symbolizes each address once and returns shared
// frames (framememo.go): frames in ELF files are kept per file, path and
// address in the file, for every process; the rest per mapping set, until
// the set, its objects or its perf map change.
//
// JIT frames (perfmap.go, jitmap.go): an address that no file mapping
// covers (an anonymous executable mapping, or memory mapped after the
// snapshot) is named from the process's perf map, the "START SIZE NAME"
// lines (hex) a JIT appends to /tmp/perf-PID.map (V8 with
// --perf-basic-prof names them like "JS:*fib /app/fib.js:1:13"). The one
// path read is /proc/PID/root/tmp/perf-NSPID.map, NSPID being the last
// field of NSpid in /proc/PID/status: it is the host's /tmp/perf-PID.map
// for a host process and the container's file for a process in one. Names
// are kept as written (spaces too; the output turns ';' into ','); such
// frames have Module "[anon]" (or their mapping's name) and no source file.
// Where lines overlap, the later one wins (the JIT reused the addresses).
// The process's /tmp is opened when the process is first snapshotted, and
// the map in it once it exists; both are kept open, so a map written after
// that, and lines appended later, are read when an address is not found,
// even after the process exited or deleted the file. The file is opened
// inside that /tmp only (no link out of it), only when it is a regular
// file no older than the process (else it is an earlier process's with the
// pid); it is read no more once the pid runs another process (start time
// in /proc/PID/stat differs) or the file was rewritten (its first bytes
// changed). At most 1024 processes keep theirs open; past that, maps are
// read by path while their process runs. An exec record re-reads the map
// of a running process. A process that exits before its first event is
// handled is symbolized from its mapping records only, without JIT names.
// jitdump files (/tmp/jit-PID.dump) are not read.
//
// Source lines and inline frames: where an object has DWARF (or is a Go
// binary with only .gopclntab), each frame gets the file and line of its
// address, and an address inside inlined calls expands into one Inline
// frame per call, innermost first, each with the line executing in it,
// followed by the physical frame with the line of the outermost call site,
// as binutils' addr2line -i prints them (objfile.Object.SourceAt). The
// physical frame keeps its ELF symbol name; inline frames are named from
// DWARF (linkage name demangled, else DW_AT_name).
package resolver
