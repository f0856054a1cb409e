// Package unwind turns an ELF file's call-frame information (.eh_frame,
// .debug_frame) into the compact x86_64 unwind tables the BPF DWARF
// unwinder searches, and resolves a process's executable mappings to those
// tables with their load biases. It owns the tables' encoding, in the exact
// layout the BPF code reads (encode.go, ruleset.go). It is pure: files in,
// values out; writing the encoded tables into BPF maps belongs to package
// bpf. ELF files are opened and read through internal/safeelf. The one
// mapping without a file that gets a table is the vDSO: its image, the
// same in every 64-bit process of a kernel, is probee's own copy
// (internal/vdso; vdso.go).
//
// # Why in-house
//
// No Go library evaluates .eh_frame row tables correctly and fast enough to
// build libc's table in milliseconds (delve's pkg/dwarf/frame misreads
// clang's version-4 .debug_frame CIEs; debug/dwarf has no CFI support). The
// parser is checked row by row against `readelf --debug-dump=frames-interp`
// (oracle_test.go), and the reference unwinder (Unwind) against gdb's
// backtrace on the no-frame-pointer fixtures (gdb_test.go).
//
// # Rules
//
// Every CFI row is reduced to a Rule: the CFA is rsp+off, rbp+off, rbx+off
// (ld.so's lazy-binding trampolines), the .plt expression, a signal frame
// (CIE augmentation 'S'), end of stack (return address undefined) or
// unsupported (stop); the return address must be at CFA-8 (anything else is
// unsupported); the caller's rbp is unchanged, loaded from CFA+off, or
// undefined; where the frame saved its caller's rbx is kept too, so that a
// walk knows rbx when it reaches a trampoline. Rows whose rules are equal
// merge.
// Each FDE ends with a CFANone entry so a pc between functions never uses
// a stale rule, except where the next FDE starts after mere alignment
// padding (less than 16 bytes, 16-aligned start), which is never executed.
// Code at the ELF entry point that no FDE covers (ld.so's _start and
// _dl_start_user) gets an end-of-stack rule over at most 256 bytes, up to
// the next FDE (entry.go): it is the first code of a process, and the
// outermost frame of every start-up constructor's stack. A lazy-binding
// .plt that no FDE covers (lld emits no CFI for it) gets the rules GNU
// ld's CFI gives a .plt, and .init and .fini (crti/crtn code, never with
// CFI) get theirs (synth.go), and so does GCC's crtbegin code around
// __do_global_dtors_aux (crtstuff.go). Other function symbols no FDE
// covers (hand-written assembly, crt code BOLT moved) get the rules of
// their stack heights, found by decoding them (symframes.go,
// stackheight.go, heightcfi.go; golang.org/x/arch decodes, through
// internal/x86code).
//
// Go binaries get no table under --unwind auto (frame pointers walk
// them); what the walk needs to go on from runtime.morestack to the
// goroutine whose stack grows, the TLS offset of g and the offsets of
// g.m, m.curg and g.sched's pc, sp and bp, is read from the code of
// runtime.morestack and runtime.systemstack (gostack.go: GoStack,
// ReadGoBinary), since Go binaries often carry no DWARF to name them.
//
// # Building
//
// Built fast, because a traced command waits at the start gate until its
// tables are loaded (libLLVM-14 has 860,973 CFI rows). BuildFile maps the
// CFI sections rather than reading them onto the heap (a page fault per 4
// KiB read cost a third of the parse); a fault because the file shrank
// meanwhile is an error, on every goroutine that reads the mapping
// (debug.SetPanicOnFault). ParseCFI parses a section of 1 MB or more in
// parts: one pass walks the records and parses the CIEs, then ranges of
// FDE records are decoded on goroutines of their own (parseparts.go). FDEs
// hold no pointers, so the garbage collector never scans them.
//
// Build sorts the FDEs by start, cuts them into ranges of about equal
// instruction bytes, one per CPU (GOMAXPROCS; one range below 16,384
// FDEs), and evaluates each range on its own goroutine into a builder that
// keeps entries in their final form (Entry and the page index, nothing to
// copy at the end), all ranges into regions of one array. The ranges are
// then joined in order, doing at each seam what a single pass would have
// done there (clip, replace or merge the first entry), so the table is the
// one a single pass gives, rules in the same order; build_test.go and
// FuzzParseEhFrame check it against the first, one-pass builder (refBuild).
// Rules are numbered through a small direct-mapped cache before the map.
// The README gives the figures (BenchmarkBuild).
//
// # Lookup
//
// Entry pcs are relative to Table.Base, itself an ELF virtual address:
//
//	table_pc = runtime_pc - (load_bias + Base)   // runtime_pc-1 for return addresses
//	page     = table_pc >> 16
//	if page >= npages: no rule
//	search Entries[Pages[page] : Pages[page+1]] for the last entry with
//	    pc_low <= (table_pc & 0xffff); if there is none, take entry
//	    Pages[page]-1 (the last entry of an earlier page); none at all (index
//	    -1): no rule
//	rule = Rules[entry.rule]; CFANone means no rule
//
// At most 17 binary-search steps (a page holds at most 65536 entries);
// libc averages about 1000 entries per page, so about 10.
// After a CFASignal frame the next pc is exact (it was interrupted, not a
// return address): look it up without the -1.
//
// # Byte layout (little endian), as MarshalBinary writes it
//
//	header, HeaderSize = 32 bytes:
//	  0  [4]u8  magic "PBUW"
//	  4  u32    format version (1)
//	  8  u64    base         ELF virtual address of table pc 0
//	  16 u32    npages       the page index has npages+1 elements
//	  20 u32    nentries
//	  24 u32    nrules
//	  28 u32    reserved, 0
//	page index: (npages+1) x u32, PageSize = 4 bytes each
//	  Pages[p] = index of the first entry whose table_pc >> 16 >= p;
//	  Pages[npages] = nentries
//	entries: nentries x EntrySize = 4 bytes, sorted by table pc
//	  0 u16 pc_low   table_pc & 0xffff (the page comes from the index)
//	  2 u16 rule     index into the rules
//	rules: nrules x RuleSize = 12 bytes
//	  0 u8  cfa_type       CFAType: 0 none, 1 rsp, 2 rbp, 3 plt, 4 signal,
//	                       5 unsupported, 6 end of stack, 7 rsp with the
//	                       return address in rdi (first frame only),
//	                       8 rbx
//	  1 u8  rbp_type       RBPType: 0 same, 1 offset, 2 undefined
//	  2 u8  plt_threshold  plt: cfa = rsp + cfa_offset + ((rip & 15) >= plt_threshold ? 8 : 0)
//	  3 i8  rbx_slot       the caller's rbx is at cfa + 8*rbx_slot (0: not saved)
//	  4 i32 cfa_offset     rsp/rbp/plt/rbx: cfa = reg + cfa_offset
//	  8 i32 rbp_offset     rbp_type offset: caller rbp = *(u64 *)(cfa + rbp_offset)
//	return address: *(u64 *)(cfa - 8) for rsp, rbp and plt rules.
//	signal frame: rsp points at the ucontext; rip, rsp and rbp of the
//	interrupted frame are at rsp+SigcontextRIP (168), +SigcontextRSP (160)
//	and +SigcontextRBP (120).
//
// Rules[0] is always the CFANone rule.
//
// # Writing the BPF maps
//
// This package encodes; package bpf only writes maps. bpf keeps every
// table's page index and entries in two shared arrays and one rule array
// for all binaries (bpf/doc.go). It writes Table.Pages as they are, the
// entries RuleSet.Entries returns (each rule index remapped into the shared
// RuleSet), and EncodeRules of the rules the set gained since its last
// write. RuleSet.Entries refuses, with an error, what the BPF search would
// misread: a page index that does not end at the entry count or decreases,
// pc_low out of order within a page, a rule index naming no rule; and the
// set refuses, leaving itself unchanged, a table whose new rules would not
// fit the rule map (NewRuleSet's limit). MarshalBinary writes the same
// encodings after the same checks.
//
// In C (bpf/rules.h and bpf/probee.h), an entry is one __u32 e with
// pc_low = e & 0xffff and rule = e >> 16 (the little-endian u16 pair
// above), and a rule is
//
//	struct unwind_rule {
//		__u8 cfa_type, rbp_type, plt_threshold, reserved;
//		__s32 cfa_offset, rbp_offset;
//	};
//
// # Processes
//
// ParseMaps/ReadMaps read /proc/PID/maps; LoadBias computes a mapping's
// bias from the PT_LOAD segment holding its file offset (never assuming one
// p_vaddr - p_offset for the whole file); Cache builds each file's table
// once, keyed by internal/fileid's identity (the build-id, else device,
// inode, size and mtime: resolver's Index uses the same key), and
// Cache.Modules resolves a process's executable mappings. A Table with no
// entries means the file has no CFI: unwind it with frame pointers.
//
// # Between runs
//
// A Cache made with NewCacheWithStore looks a table up in its Store under
// the file's key (internal/fileid's ID.Key) before building it, and saves
// the tables it builds; Cache.Stats counts both. unwind/diskcache is the
// store probee uses: files under $XDG_CACHE_HOME/probee/unwind, refused
// when stale (another FormatVersion or BuilderVersion: bump BuilderVersion
// with any change to the tables built from a file) or corrupt.
package unwind
