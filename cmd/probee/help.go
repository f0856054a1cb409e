package main

const helpText = `probee - who calls this function, and how much?

Usage:
  probee --uprobe SPEC ... [--kprobe SPEC ...] [--tracepoint SPEC ...] [--usdt SPEC ...]
         [-e SPEC ...] [-p PID | -- CMD ARGS...] [-d DURATION] [-o PATH ...]
  probee --sample [-F HZ] [-p PID | -- CMD ARGS...] [-d DURATION] [-o PATH ...]
  probee [--off-cpu] [--wall] [--wakers] [--min-block D] [-p PID | -- CMD ARGS...] [-d DURATION] [-o PATH ...]
  probee --list-probes [--json] [-v] SPEC... [-p PID | -- CMD ARGS...]
  probee -h | --help

Examples:
  probee --uprobe 'libc:malloc*' -- ./app        stacks of every malloc* call, per probe
  probee --uprobe ./app:leaf -o out/ -- ./app     per-probe out/<label>.folded and .svg
  probee --uprobe 'ret:libc:free' -p 1234 -d 5s   return probe in a running process
  probee --latency --uprobe ./app:handle -o lat.svg -- ./app   time in handle, per caller
  probee --weight arg0 --uprobe libc:malloc -- ./app   bytes malloc'd, per call stack
  probee --tracepoint syscalls:sys_enter_openat -d 2s -o opens.svg
  probee --sample -F 499 -o cpu.svg -o cpu.pb.gz -- ./app   CPU profile, no frame pointers needed
  probee --off-cpu --min-block 1ms -o waits.svg -- ./app    where threads wait, and how long
  probee --wall -F 499 -o wall.svg -- ./app                 running and waiting, per thread
  probee --uprobe './app:hot.c:42' --lines -- ./app         a source line, with file:line frames
  probee --usdt /usr/bin/python3.11:python:function__entry -p 1234   a USDT probe (semaphores set)
  probee --sample --push pyroscope://127.0.0.1:4040 --label env=dev   CPU profiles to Pyroscope
  probee --list-probes 'libc:regex:^mem(cpy|set)$'
  probee -l -v 'usdt:*' -p 1234                       USDT probes of every file pid 1234 maps
  probee -l --json 'demangle:ns::Klass::*' -- ./app   listing what ./app would load
  probee -l -v 'libc:malloc' 'libc:free' -p 1234      two specs, with addresses

Probes (repeatable; each spec is one probe with its own output):
  --uprobe SPEC       user function: [ret:][TARGET:]MATCHER[+OFF] or [TARGET:]file.c:LINE
  --kprobe SPEC       kernel function: [ret:][MODULE:]MATCHER[+OFF]
  --tracepoint SPEC   CATEGORY:NAME (globs allowed)
  --usdt SPEC         USDT probe: [TARGET:][PROVIDER:]NAME (globs allowed), every site
  -e, --event SPEC    any kind, with a kind prefix (uprobe:, uretprobe:, kprobe:, tracepoint:, usdt:)
  MATCHER is exact (malloc), glob (malloc*), regex:RE or /RE/, demangle:ns::K::f, exact:NAME.
  TARGET is a path (/usr/lib/..., ./app) or a library name (libc, c, pthread, libssl.so.3).

How much (function entries of --uprobe and --kprobe specs, not ret:, +OFF or lines):
  --latency           time each call from entry to return, per entry stack: folded
                      stacks and flamegraphs weigh nanoseconds, pprof gets calls/count
                      and time/nanoseconds; per probe a summary (calls, p50, p90, p99,
                      max, log2 histogram) on stderr
  --min-latency D     with --latency: only calls of at least D keep their stacks (e.g. 5ms)
  --weight ARG[:UNIT] sum an integer argument per stack (arg0-arg5, e.g. arg0 for
                      malloc's size) instead of counting hits; UNIT names it in pprof
                      (default bytes)

Scope and duration:
  -p, --pid PID       trace one running process and the children it forks from now on
  -- CMD ARGS...      start CMD, trace it and its children, stop when it exits
  -d, --duration D    stop after D (e.g. 5s, 2m); Ctrl-C and SIGTERM also stop cleanly;
                      a CMD still running then gets 1s to exit, then SIGTERM

Output (outputs are always written, also on Ctrl-C and -d expiry):
  -o, --output PATH   x.folded|x.collapsed (all probes, label as root frame), x.svg,
                      x.pb.gz (pprof), or DIR/ (one <label>.folded + <label>.svg per probe);
                      repeatable. Without -o: collapsed stacks on stdout, and when
                      stdout is not a terminal the command's stdout goes to stderr
  --unwind MODE       fp (frame pointers), dwarf (.eh_frame tables in BPF) or auto
                      (default: dwarf where a binary has tables, frame pointers for Go)
  --no-tail-calls     DWARF unwinding with the in-program loop instead of tail calls
  --unwind-budget SIZE
                      most kernel memory for unwind tables (default 256M; clang with
                      libLLVM needs 7M): a binary past it is walked without its table
  --table-cache-dir DIR
                      where built unwind tables are kept for the next run (default
                      $XDG_CACHE_HOME/probee/unwind, else ~/.cache/probee/unwind)
  --table-cache-size SIZE
                      most disk space the table cache takes (default 256M); the least
                      recently used tables go first
  --no-table-cache    build every unwind table; read and write no table cache
  --lines             append :file:line to frames (from DWARF)
  --no-inline         no frames for inlined calls
  --group-by container
                      a root frame above the process naming its container, from its
                      cgroup: "[container ID]", else "[cgroup PATH]"; pprof labels
                      container and cgroup
  --max-stacks N      size of the in-kernel count and user stack maps, kernel stacks N/4
                      (default 65536: 50K distinct stacks lose nothing; 16384 before
                      Linux 6.1, where the maps are preallocated); a value whose full
                      maps (~6.5 KiB a stack) and unwind tables would take more than
                      half the memory available is refused, as is an --unwind-budget
  --interval D        move the kernel's counts into probee every D while tracing, so
                      long runs never fill the maps (default 1s; 0: only at the end)
  --no-uprobe-multi   one uprobe link per function instead of one uprobe_multi link per file
  --no-kprobe-multi   one kprobe link per function instead of kprobe_multi links
  -q, --quiet         no status lines on stderr
  -v, --verbose       also the progress and debug lines where stderr is not a terminal

Sampling:
  --sample            sample on-CPU stacks on every CPU (cpu-clock), probe label "sample"
  -F, --frequency HZ  samples per second per CPU (default 99)
  --include-idle      keep samples of the idle task

Waiting (off-CPU time, beside any probe or --sample; from sched_switch, no kprobes):
  --off-cpu           time each wait of the traced threads, from leaving the CPU to
                      running again, per stack at the switch-out (user + kernel),
                      topped by the state: [sleep], [uninterruptible] (D: I/O),
                      [preempted] (runnable, waiting for a CPU), [stopped]; probe
                      label "off-cpu", weighed in nanoseconds (pprof off_cpu)
  --wall              wall-clock time per thread: its CPU samples (at -F, weighed by
                      the period) and its waits off CPU in one probe, "wall", in
                      nanoseconds, so a thread's stacks add up to its elapsed time;
                      pprof wall/nanoseconds, split into cpu and off_cpu
  --wakers            with --off-cpu or --wall: above each wait's state, who woke it:
                      "[woken by NAME]", then the waker's kernel and user stack from
                      the wake-up to its root ("interrupt": a timer or a device)
  --min-block D       with --off-cpu or --wall: only waits of at least D keep their stacks
  --max-block D       with --off-cpu or --wall: only waits of at most D keep their stacks

Fleet (push per-probe delta profiles to a profiling server while tracing):
  --push URL          pyroscope://HOST:4040 or parca://HOST:7070 (pyroscope+https://,
                      parca+https://; or http(s):// with --push-backend); with --push,
                      no -d runs until Ctrl-C or SIGTERM
  --push-backend B    pyroscope or parca, for an http:// or https:// URL
  --push-interval D   one profile per probe every D, and at the end (default 15s)
  --push-queue N      profiles that wait while the server is down or slow (default 64);
                      past N the oldest is dropped, counted and reported
  --push-queue-bytes SIZE
                      bound of their encoded size (default 64M): past it the oldest
                      are dropped, counted and reported
  --push-flush-timeout D
                      at the end, how long to keep sending what waits (default 10s)
  --service-name NAME label service_name (default: CMD's name, else the host name)
  --label NAME=VALUE  another label on every profile (repeatable)
  --push-basic-auth USER:PASSWORD
                      basic auth (or $PROBEE_PUSH_BASIC_AUTH)
  --push-token TOKEN  bearer token (or $PROBEE_PUSH_TOKEN)
  --push-tenant ID    X-Scope-OrgID header (or $PROBEE_PUSH_TENANT)

Listing (nothing is attached):
  -l, --list-probes   print the targets the SPEC arguments resolve to, one per line,
                      sorted, the union of all SPECs; flags may come before or after
                      them (--list-probes=SPEC, the older form, still works)
  --json              one JSON object per target
  -v, --verbose       adds address, size, demangled name and source line; USDT: each site's
                      address, semaphore and arguments

Exit codes: 0 ok, 1 runtime failure or nothing matched, 2 usage or spec error.
  With -- CMD: when CMD ends by itself, probee exits as CMD did (its status, or
  128 + the signal number), after writing every output; probee's own failure
  (1, 2) wins. When tracing ends first (-d, Ctrl-C, SIGTERM) and probee stops
  CMD, the exit code is probee's and the status line says how CMD ended.
`
