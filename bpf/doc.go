// Package bpf owns everything in probee that touches the kernel: the BPF C
// sources (probee.bpf.c, every program by context; its headers, one concern
// each, laid out in docs/design.md; probee.h, what Go shares) and their
// committed bpf2go output, loading,
// attaching (uprobe, uretprobe, uprobe_multi, kprobe, kretprobe,
// kprobe_multi, tracepoint), the capture loop
// (ring-buffer notices of new and exiting processes) and draining the
// in-kernel aggregation into plain Go values. The values process tracking
// (package proctrack) takes from it and hands back (process notices,
// mapping records, deferred stacks, the user stack depth, ErrTablesFull)
// are defined in the leaf package bpf/wire, so that proctrack does not
// import bpf; consts_test.go checks wire's copies of probee.h's values.
//
// It takes concrete targets (file path + file offset, tracepoint names) from
// the caller and never parses ELF or spec strings itself: that is resolver's
// and probespec's job. It returns raw addresses; symbolization is resolver's.
//
// # Kernel side
//
// Every attach carries a cookie: bits 0-31 are the probe id (the index of the
// spec on the command line), bit 32 says the probe sits on a function's first
// instruction. At such a probe the caller's return address is read from [rsp]
// before the frame-pointer chain is followed, because rbp still belongs to the
// caller: this is the frame every FP-based peer loses at function entry.
//
// Events are counted in the kernel in a hash map keyed by (probe, tgid, comm,
// user stack, kernel stack). User and kernel stacks are deduplicated in hash
// maps keyed by a 64-bit hash of their pcs (allocated on demand). Every loss
// is counted per CPU by cause (see DropCause) and reported; nothing is
// dropped silently.
//
// Map sizes (Options.MaxStacks, --max-stacks N; default N = 65536, 16384
// where maps are preallocated, see Older kernels): two counts maps
// (counts0/1) of N keys each, user stacks in three maps of N stacks each by
// depth (ustacks_short, ustacks_mid, ustacks: up to 48, 112 and 256 pcs,
// 512 bytes, 1 KiB and 4 KiB of kernel memory a stack; N/2 and N/4 of the
// deeper ones where preallocated; see ustacks.go) and kstacks of N/4 kernel
// stacks (16384, ~1 KiB each), all allocated on demand. What they take
// when full (StackMapsCost: ~6.5 KiB a stack with the kernel's element
// headers and kmalloc's size classes, plus the bucket arrays allocated
// up front) and the unwind table budget are checked against the memory
// available before anything is loaded (CheckMemory). 50K distinct user
// stacks fit the defaults without loss. Kernel stacks are keyed by a hash
// of their content like user stacks, not kept in a stack trace map: its ids
// are buckets that collide long before the map is full, and a freed id can
// be reused while a count still names it. Periodic drains (DrainInterval,
// interval.go) flip the active counts map, wait until no event counts in
// the other one (the counts gate, gate.go), and move its counts, then every
// stack of the stack maps, into Go (stacks.go). The programs count the keys
// they add to each map in their gate slot, so that user space drains early
// when a map is half full (DrainDue).
//
// # Older kernels
//
// compat.h and compat.go adapt to what the kernel offers, probed once:
// kernels without BPF callbacks (before 5.13) get the legacy build of the
// same programs (probee_legacy: no bpf_loop, no bpf_find_vma, no BTF task
// pointer, no cmpxchg, static instead of global subprograms); kernels
// without BPF cookies (before 5.15) get one copy of a program per cookie,
// its fixed_cookie set in its own rodata, sharing every other map with the
// session (Session.cookieProgram); without bpf_task_pt_regs the user
// registers are read at the top of the task's kernel stack; before 6.1 the
// hash maps are preallocated (perf_event programs need it) and smaller.
// Options.Compat turns these on here for the e2e tests (PROBEE_COMPAT).
// The README's requirements table says what each costs the user.
//
// # Attaching
//
// Uprobes on one file are attached with one uprobe_multi link when the kernel
// has it (6.6+). The kernel refuses a whole link if it refuses one address
// (uprobes cannot be placed on some instructions), so a refused link is split
// in halves until the refused addresses are isolated; those are skipped and
// reported, the rest attached. Kernels without uprobe_multi get one perf-event
// link per target.
//
// USDT sites are uprobes like any other (UprobeTarget at the site's nop,
// not an entry); a site with a semaphore carries its file offset
// (UprobeTarget.RefCtrOffset), which both link kinds pass to the kernel as
// the uprobe's reference counter: the kernel raises the semaphore in every
// process it installs the uprobe in (now and at later mmaps), so gated
// probes fire, and lowers it when the link is closed, on exit or kill.
// probee never writes another process's memory itself.
//
// Kprobes and kretprobes (probee.bpf.c, kprobe.go) take the kernel stack with
// bpf_get_stack (kept in kstacks like every kernel stack) and the user
// stack from the task's saved user registers, like tracepoints. A spec's
// functions share one kprobe_multi link per
// direction when the kernel has it (split in halves on refusal, like
// uprobe_multi), one perf-event link per function otherwise (and for +off
// probes). Whether the kernel has kprobes at all is read from the kprobe PMU
// or tracefs kprobe_events (HaveKprobes), not from a program load, which
// succeeds without CONFIG_KPROBES; attaching then fails with ErrNoKprobes.
//
// # DWARF unwinding (unwind.h, unwind_maps.h, rules.h, tables.go)
//
// Storage: one u32 space for every table's page index and entries (u32:
// pc_low | rule<<16), in shards of 64K elements (256 KiB; mmapable arrays
// of 16-element values, written with one copy) that an ARRAY_OF_MAPS
// (unwind_shards) holds; shards.go creates shards when a table reaches
// them, with 4 spares (1 MiB), in one batch (each addition to an array of
// maps waits for an RCU grace period), so the kernel holds the tables'
// bytes and less than five shards more. Each binary's table (unwind.Table, cached by file
// identity, known here by its Key) is placed once, in the first range a
// released table left where it fits, else at the storage's end, while the
// tables fit the table budget (Options.TableBudget, --unwind-budget;
// DefaultTableBudget, 256 MiB, is 36 times what clang, libLLVM,
// libclang-cpp, libstdc++ and libc need together); a table past it is
// refused with wire.ErrTablesFull, reported once, and its binary is
// walked like code without a table until released tables leave room it
// may fit in (then it is tried again when offered: proctrack offers
// refused files at each sweep) or its file is forgotten. Rules live in one shared
// rule ARRAY (unwind.RuleSet, entries are remapped to it). All shards
// have one size, so the verifier
// inlines both lookups; a frame takes two shard lookups (the page index's
// and the page's entries'), as layout.go places a table's page index, and
// each page's entries with the element before them, within one shard
// (padding where a page would cross one: 1.4% for libLLVM's table).
// unwind encodes entries and rules and refuses tables the search would
// misread; tables.go and layout.go only place and write them. A process's
// executable mappings live in proc_maps[tgid] (a sorted array of up to 256
// mappings with bias and table offsets, binary-searched per frame); the
// kernel deletes it at sched_process_exit. A forked child without an
// array yet, when neither it nor its parent has exec'd since the fork
// (the tasks' exec ids), is walked with its parent's. Binary searches are
// branch-free, or the verifier's path count explodes.
//
// Tables live while something maps their file (release.go). The caller
// forgets the files no process it tracks maps any more (ForgetFiles:
// proctrack's sweep, with the files whose tables unwind.Cache.Evict let
// go): their file_tables entries are deleted at once, and a table goes
// once no mapping list in proc_maps refers to it either (the kernel
// deletes a list at exit and exec; a list written after its process
// exited is deleted then). Releasing raises maps_gen, so that no walk
// state keeps a mapping found before, and the range waits tableGrace
// (5 s) and an RCU grace period (every non-sleepable program that might
// still read it has returned) before a table is written there
// (freelist.go: first fit, neighbours merged, a free range at the
// storage's end lowers the end). The walks' caches of rules (rule_cache,
// the walk state's rules) key a pc by where its table lies, so a table
// placed where released ones lay carries a placement tag of its own in
// its mapping flags, which their checks include (rules.h: table_tag): no
// walk gets the rules of a table that lay there before. So the storage
// takes the budget at most (rounded up to a shard: shards are never
// freed, and never made past it), whatever files the machine maps over a
// run, and file_tables holds the files mapped now. A file mapped again
// gets its table anew. The rules are interned and never
// freed (distinct rules are few: libc's 23.5K CFI rows have about 300;
// past MAX_RULES a new table is refused like one past the budget), nor
// are the Go binaries' go_stacks elements (MAX_GO_STACKS).
//
// Walks: each context kind has its own per-CPU state slot (uprobe,
// uprobe_multi, kprobe, tracepoint, perf_event). With tail calls (default)
// the entry program tail-calls its kind's step program, which walks
// StepFrames frames per call and tail-calls itself, up to MaxTailCalls:
// 256 frames. uprobe and kprobe programs share the kprobe-typed array
// steps_kprobe (index 0 uprobe step, 1 kprobe step: a kprobe program calls
// record(ctx, cookie, regs, 1, SLOT_KPROBE, steps_kprobe, STEP_KPROBE));
// uprobe.multi, kprobe.multi, tracepoint and perf_event have their own
// arrays (steps_multi, steps_kmulti, steps_tp, steps_perf: a prog array is
// bound to the type and attach type of its first user). These entry and
// step programs are most of the verifier's work, so a session loads them
// when a probe of their kind is first attached, the step program first,
// in its array before its entry program can run (programs.go); it opens
// with its maps and small programs only.
// Without tail calls (Options.NoTailCalls, or a failed tail call) the walk
// runs inline in bpf_loop (256 frames; 5.17+) or a bounded loop of
// InlineLoopFrames. Frames: pc-1 lookups for return addresses, exact pcs
// after signal frames; mappings without a table take a frame-pointer step,
// which may go down to another stack twice per walk (Go's systemstack;
// MAX_STACK_SWITCHES in fpstack.h); a Go binary's mapping (MAPPING_GO,
// its unwind.GoStack in go_stacks, gostacks.go) goes on from
// runtime.morestack, where the system stack's frames end, to the
// goroutine whose stack grows: g from the TLS (task->thread.fsbase,
// CO-RE), then g.m.curg and its g.sched (go_switch_step in unwind.h; not
// in the --unwind fp walk of fpstack.h); the walk remembers where the last
// frame that saved rbx put it, for the rbx-based CFA of ld.so's
// lazy-binding trampolines (CFA_RBX, frame_rbx in unwind.h); the
// interrupted frame's general registers are kept (unwind_state.gpr) for a
// first frame whose CFA is another register (CFA_REG: stack probe loops);
// a return address equal to the uretprobe trampoline is replaced by the
// real one from the task's pending return_instance whose stack slot matches
// (CO-RE reads of task->utask). Cut walks set STACK_TRUNCATED and count a
// partial-stack cause (DropUnknownPC, DropNoTables, DropCut), unless the
// task is in execve (task->in_execve: STACK_IN_EXEC, the user frames are
// dropped, they are the old program's registers in the new memory) or
// exiting (PF_EXITING: STACK_EXITING, its memory is being unmapped); a cut
// walk reads those task fields (mark_gone). A walk that ended uncut inside
// execve is marked STACK_IN_EXEC too where the word at the event's stack
// pointer cannot be read (mark_stale): the registers are the old
// program's over the new memory, where a non-PIE Go program executing
// another had its old pc name a function of the new one. Complete walks
// pay one load of the task's in_execve for it.
//
// Tables are given by the caller (SetProcessModules). Stacks of processes
// without tables yet are walked with frame pointers, and walks cut at an
// unknown pc end early; both events are still counted with the stack they
// got, and tallied as partial stacks (DropNoTables, DropUnknownPC: the
// names are counters, not losses), which the CLI reports apart from drops.
// With bpf_find_vma, a walk that reaches a file whose table is not loaded
// yet is handed over instead (defer.h, deferred.go: Deferred, AddStack):
// the frames so far, the registers there (all of the interrupted frame's
// when it is the first) and a copy of the stack above go through the
// deferred ring buffer, packed (a record is as long as what it carries:
// a shallow stack takes ~2 KiB, not 30), and user space finishes and counts
// the stack (package proctrack); a record the ring cannot take is counted
// as partial as before (DropDeferLost says how many).
// The stop gates (stopgate.h; AttachLdsoGate, AttachGate, AttachRootGate,
// Continue) stop a traced process until its tables are loaded: at ld.so's
// _dl_debug_state once new objects are mapped (start-up and dlopen), at a
// program's entry point (AttachGate: the bpf tests' processes; probee's
// -- CMD is stopped right after its exec by ptrace instead, and its
// program's table loaded then), or at an exec under another root than
// probee's (a container: its program and ld.so are that root's files).
// Every stop is recorded in the holds map before its SIGSTOP (holds.go):
// Continue resumes the stop and deletes its entry, Close resumes what is
// left, and the watchdog (StartWatchdog, watchdog.go), a second probee
// process that holds the map, resumes it when probee dies without
// closing: a dead probee leaves no process stopped. Every SIGCONT goes
// through a pidfd, to the process whose start time the gate recorded.
// A traced process's pid filter entry is marked as its last thread exits
// (probee_exit), before its pid can be given to another: only the exit's
// own threads pass it then (their samples while the memory is unmapped,
// [exiting]), a new process with the pid does not; the entry goes with
// the leader's task (probee_free).
// The attach calls stop at their context's end; HandOff gives the links
// to the watchdog to detach after probee exits (handoff.go), so that a
// run interrupted while attaching ends at once.
//
// File tables (vma.h, filetables.go) are keyed by the identity of the file
// a mapping holds (vm_file->f_inode's device and inode). For an overlayfs
// file that is the layer's file, where /proc/PID/maps and stat show the
// overlay's inode, so the session asks the kernel for the key once per
// file: it maps the file itself and runs probee_file_key (probee.bpf.c) on
// that address with BPF_PROG_TEST_RUN (filekey.go). The vDSO has no
// file: vma.h recognizes the mapping at mm->context.vdso and gives it a
// key no file has (VDSO_KEY_DEV, vdsoKey), under which the table built
// from probee's own copy of the image (internal/vdso) is filed.
//
// # Sampling (sample.go)
//
// AttachSampling opens a cpu-clock perf event per online CPU (software: no
// PMU needed) and attaches probee_perf with PERF_EVENT_IOC_SET_BPF.
//
// # Off-CPU time (offcpu.go, offcpu.h)
//
// AttachOffCPU attaches probee_offcpu to the sched_switch BTF tracepoint
// (tp_btf: no kprobe, no tracefs; Linux 5.5+). At each switch it ends the
// wait of the thread coming in, then walks the stacks of the thread
// leaving (its own state slot and step program, on the same tracepoint)
// and parks them with the time; the wait's nanoseconds go to its stacks'
// measure under probe id OffCPU.Probe + state when the thread runs again.
// With OffCPU.Wakers, probee_waker on sched_waking walks the thread that
// wakes a waiting one (in its context, in a slot of its own) and joins
// its stacks to the wait (wakers.go).
// ExcludeSelf (self.go) leaves probee's own process out of system-wide
// runs, whose waits and samples it would otherwise add to what it traces.
package bpf
