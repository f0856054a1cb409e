// Package symbolize turns the addresses captured in stacks into frames:
// user addresses of a process through its mappings into the ELF objects of
// package objfile (function, offset, source file and line, one frame per
// inlined call), JIT code through the process's perf map, the vDSO through
// the kernel's image of it, and kernel addresses through /proc/kallsyms.
//
// A Symbolizer names a process's addresses from the image that ran them,
// as the processes' mapping history keeps it (proctrack.History: the
// mapping sets of each image a process ran, the objects of the files they
// map, read while the process lived, and its perf map), also after the
// process exited or exec'd. The Symbolizer creates that History (History)
// and reads it; a proctrack.Tracker keeps it up to date from the kernel's
// process notices and mapping records. Nothing is pushed the other way:
// proctrack knows nothing of frames. The Symbolizer keeps only frames: it
// lets go of those of files no known process maps after each of the
// History's sweeps (evict.go). It reads kallsyms under Config.Root; it
// never touches the kernel.
//
// Frames: the symbolizer's frames are output.Frame, the one frame type
// from here to the writers, named by output.FrameName alone.
// Symbolizer.Frames looks up exactly the addresses given. Callers pass
// pc-1 for return addresses (every frame but the leaf) themselves. A frame
// outside every function keeps its module and file offset (Module, Offset:
// module+0xOFF, as in /proc/PID/maps), never a bare [unknown] when the
// module is known. A frame in an ELF file has as Address its address in
// that file (before any load bias): the same in every process, whatever
// its load address; other frames the process's own address. AppendFrameRefs, for callers that symbolize many stacks of many
// processes (a profile), symbolizes each address once and returns shared
// frames (framememo.go): frames in ELF files are kept per file, path and
// address in the file, for every process; the rest per image
// (proctrack.Image), until the image, its objects or its perf map change.
//
// JIT frames: an address that no file mapping covers (an anonymous
// executable mapping, or memory mapped after the snapshot) is named from
// the process's perf map (internal/perfmap reads it, the History keeps
// it), the "START SIZE NAME" lines (hex) a JIT appends to
// /tmp/perf-PID.map (V8 with --perf-basic-prof names them like
// "JS:*fib /app/fib.js:1:13"). The one path read is
// /proc/PID/root/tmp/perf-NSPID.map, NSPID being the last field of NSpid
// in /proc/PID/status: it is the host's /tmp/perf-PID.map for a host
// process and the container's file for a process in one. Names are kept
// as written (spaces too; the output turns ';' into ','); such frames
// have Module "[anon]" (or their mapping's name) and no source file.
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
// Source lines and inline frames (symbolize_dwarf.go): where an object has
// DWARF, or is a Go binary (its .gopclntab serving first), each frame gets
// the file and line of its address, and an address inside inlined calls
// expands into one Inline frame per call, innermost first, each with the
// line executing in it, followed by the physical frame with the line of
// the outermost call site, as binutils' addr2line -i prints them
// (objfile.Object.SourceAt; SetInline turns the expansion off). The
// physical frame keeps its ELF symbol name; inline frames are named from
// DWARF (linkage name demangled, else DW_AT_name), or from a Go binary's
// table. The final profile is symbolized object by object (Prefetch),
// each object's DWARF let go once its addresses are done (a Go binary's
// table is kept: objfile/sources.go).
//
// Kernel frames (kstack.go): kallsyms names kernel addresses, "[module]"
// for a module's; without CAP_SYSLOG (addresses shown as 0) a frame is
// "[kernel]+0xADDR". TrimBPFFrames cuts probee's own machinery off the top
// of a kernel stack a BPF program took of its own task.
package symbolize
