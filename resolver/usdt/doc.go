// Package usdt reads the USDT probes (statically defined tracing, the
// SystemTap SDT notes that <sys/sdt.h>, DTrace's dtrace -G and
// bpftrace/BCC/perf all use) of an ELF file: which probes it has, every
// site each fires at, their semaphores and their arguments. It is the
// resolver's view of the .note.stapsdt section; resolver turns a usdt spec
// into targets with it, and bpf attaches a uprobe at each site.
//
// Written in-house: the Go packages that read these notes
// (github.com/parca-dev/usdt, github.com/mmat11/usdt) cannot be fetched
// from this project's module proxy, and the format is small. The notes are
// walked by internal/elfnote, and the file opened through internal/safeelf
// (its panic guard around debug/elf included), as everywhere in probee.
//
// # Format (version 3, note type 3, owner "stapsdt")
//
// Each note is one site: its descriptor holds three addresses (8 bytes on
// x86-64) — the site's nop, the link-time address of the .stapsdt.base
// section and the semaphore (0 for none) — then the provider, the probe
// name and the argument string, each NUL-terminated. Notes of other
// owners or types are skipped. A probe (provider:name) has a site per
// place the compiler put it (the macro used in two functions, an inlined
// function, unrolled loops): Probe.Sites holds them all, sorted, one per
// address.
//
// # Decisions
//
//   - .stapsdt.base: when the section's address differs from the one the
//     note records, the file was moved after linking (prelink moves every
//     section by one amount): the site's address and its semaphore's move
//     by that difference. Without the section, or with a recorded base of
//     0, addresses are used as they are.
//   - File offsets: a site's address must lie in an executable PT_LOAD
//     segment and its semaphore (an unsigned short) in a writable,
//     file-backed one, else the note is an error: the kernel attaches
//     uprobes and finds the reference counter by file offset, so a site
//     without one cannot be traced.
//   - Semaphores: Site.SemaphoreOffset is the file offset the kernel's
//     uprobe reference counter takes (ref_ctr_offset, Linux 4.20): while a
//     uprobe with it is attached, the kernel keeps the counter raised in
//     every process the uprobe is installed in and lowers it when the
//     uprobe goes, so nothing is left set once the tracer is gone. probee
//     never writes a process's memory itself.
//   - Arguments: "[-]SIZE[f]@OPERAND" separated by spaces, GNU as operand
//     syntax: '-' is signed, SIZE is 1, 2, 4, 8 or 16 bytes, 'f' (newer
//     sdt.h) a floating-point value, and OPERAND a register (%esi, %r12d,
//     %ah, %xmm0), a constant ($42, $-1, $sym), or memory
//     [DISP](BASE[,INDEX[,SCALE]]) with a numeric or SYMBOL[+-N]
//     displacement (-8(%rbp), fx_config(%rip), 8(%rax,%rcx,8)) or an
//     absolute address. They are parsed into Arg values (registers by their
//     64-bit register and the bytes the name covers) and kept with the
//     text, so that a probe's arguments can weight its stacks; a string
//     that does not parse (segment prefixes such as %fs:8 are not
//     supported) keeps its site, with Site.ArgsErr saying why.
//
// Checked against readelf -n (the oracle) on the fixtures, Debian's
// python3.11 (8 probes) and libstdc++ (3), and OpenJDK 17's libjvm.so (517
// probes at 531 sites, every argument string parsed); FuzzNotes,
// FuzzParseArgs and FuzzNewFile run the parser on arbitrary input.
package usdt
