#!/bin/sh
# Cost per context switch of off-CPU profilers (issue 46), side by side in
# one run. The workload is pingpong-fp: two threads passing one byte
# through two pipes N times, each blocking in read once per round trip
# (about 2N switches, 100-250K/s on a 2-core VM). The fixture times its
# own loop and counts both threads' context switches and CPU time
# (getrusage), so tracer start-up and tear-down are not counted. It runs
# untraced and under each tool, interleaved, ROUNDS rounds; each figure is
# the median of its rounds.
#   - offcputime-bpfcc -f -p PID (BCC, Python; its kprobe on
#     finish_task_switch times the wait and takes the stacks at the
#     switch-in, frame pointers). BCC compiles at run time against kernel
#     headers: without /lib/modules/$(uname -r)/build, Debian's header
#     packages (tests/install-deps.sh bench) are merged once into
#     ~/.cache/probee/bcc-headers for BCC_KERNEL_SOURCE. A kernel without
#     kprobes cannot run it: the row says why and the others go on;
#   - offcputime -p PID (BCC's libbpf-tools build of the same tool, Debian
#     package libbpf-tools: on the sched_switch BTF tracepoint, stack ids
#     taken at every switch-out, frame pointers). The ratios are to
#     offcputime-bpfcc where it ran, else to this one;
#   - bpftrace on tracepoint:sched:sched_switch: at the switch-out of a
#     thread of the workload its time, ustack and kstack per tid; at its
#     switch-in the wait summed into @[kstack, ustack];
#   - probee --off-cpu --unwind fp (frame pointers, like the others) and
#     the default (DWARF through Debian's libc, which has no frame pointers:
#     complete stacks). Target (issue 46): DWARF <= 0.8x offcputime;
#   - probee --off-cpu --wakers: each wait's waker walked too (every
#     switch-out here is a wait the other thread ends). BCC's offwaketime
#     needs a kprobe, as offcputime-bpfcc does.
# The offcputime tools trace a running pid: the fixture waits for a byte
# from a FIFO until the tool is attached (its bpf_link or perf_event fd);
# bpftrace (-c) and probee (-- CMD) start the fixture once attached.
# Cost per switch = (loop wall under the tool - untraced) / switches; the
# sys CPU column is the same from the workload threads' system time, which
# leaves out BPF run in other tasks' context (a switch-in from idle).
# Knobs: N round trips (default 50000), ROUNDS (default 9), FIXTURE
# (default pingpong-fp), PROBEE (default bin/probee), VERBOSE=1 (each
# run's "wall_ns switches user_ns sys_ns" too).
set -e
cd "$(dirname "$0")/../.."
N=${N:-50000}
ROUNDS=${ROUNDS:-9}
FIXTURE=${FIXTURE:-pingpong-fp}
BIN=$PWD/tests/fixtures/bin/$FIXTURE
PROBEE=${PROBEE:-$PWD/bin/probee}
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Each run appends "wall_ns switches user_ns sys_ns" to $OUT/NAME.
figures() { # NAME: the fixture's line on stdin
	sed -n 's/^pingpong: [0-9]* round trips in \([0-9]*\) ns, \([0-9]*\) switches, \([0-9]*\) ns user, \([0-9]*\) ns sys$/\1 \2 \3 \4/p' >>"$OUT/$1"
}
untraced() { "$BIN" "$N" 2>&1 >/dev/null | figures base; }
under_bpftrace() {
	bpftrace -q -e 'tracepoint:sched:sched_switch {
	if (pid == cpid) { @start[tid] = nsecs; @us[tid] = ustack; @ks[tid] = kstack; }
	$s = @start[args->next_pid];
	if ($s) {
		@[@ks[args->next_pid], @us[args->next_pid]] = sum(nsecs - $s);
		delete(@start[args->next_pid]); delete(@us[args->next_pid]); delete(@ks[args->next_pid]);
	}
}
END { clear(@start); clear(@us); clear(@ks); }' -c "$BIN $N" >"$OUT/bt.out" 2>"$OUT/bt.err" || true
	figures bpftrace <"$OUT/bt.err"
	grep -q '^@\[' "$OUT/bt.out" || { echo "bpftrace: no stacks" >&2; tail -3 "$OUT/bt.err" >&2; }
}
under_probee() { # NAME UNWIND [FLAGS...]
	name=$1 unwind=$2
	shift 2
	"$PROBEE" -q --off-cpu "$@" --unwind "$unwind" -o "$OUT/p.folded" -- "$BIN" "$N" 2>&1 >/dev/null | figures "$name"
	grep -q 'run_p[io]ng' "$OUT/p.folded" || echo "$name: no run_ping/run_pong stacks" >&2
}

# by_pid NAME TOOL ARGS...: starts the fixture waiting on a FIFO, runs
# TOOL ARGS... -p PID, releases the fixture once TOOL has attached, stops
# TOOL (SIGINT) after the loop. Returns 1, with TOOL's last words in
# $OUT/NAME.why, if TOOL exits before attaching.
by_pid() {
	name=$1; shift
	rm -f "$OUT/start"; mkfifo "$OUT/start"
	"$BIN" "$N" "$OUT/start" 2>"$OUT/fx.err" >/dev/null & fx=$!
	"$@" -p "$fx" 600 >"$OUT/tool.out" 2>"$OUT/tool.err" & tool=$!
	ok=1 i=0
	until ls -l "/proc/$tool/fd" 2>/dev/null | grep -qE 'bpf_link|bpf-link|perf_event'; do
		if ! kill -0 "$tool" 2>/dev/null || [ $i -ge 600 ]; then ok=0; break; fi
		sleep 0.1; i=$((i + 1))
	done
	[ $ok = 1 ] && sleep 0.3 # the last attachments after the first
	printf x >"$OUT/start"
	wait "$fx" || true
	kill -INT "$tool" 2>/dev/null || true
	wait "$tool" || true
	if [ $ok = 0 ]; then
		tail -1 "$OUT/tool.err" >"$OUT/$name.why"
		return 1
	fi
	figures "$name" <"$OUT/fx.err"
	[ -s "$OUT/tool.out" ] || echo "$name: no output" >&2
}

# offcputime-bpfcc: BCC_KERNEL_SOURCE from Debian's newest header
# packages (common + amd64) merged once, unless the kernel has its own.
bcc_headers() {
	[ -e "/lib/modules/$(uname -r)/build/include" ] && return 0
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -1)
	arch=${common%-common}-amd64
	[ -n "$common" ] && [ -d "$arch" ] || return 1
	dir=${XDG_CACHE_HOME:-$HOME/.cache}/probee/bcc-headers
	if [ "$(cat "$dir/.from" 2>/dev/null)" != "$common" ]; then
		rm -rf "$dir"; mkdir -p "$dir"
		cp -a "$common/." "$dir/"
		cp -a --remove-destination "$arch/." "$dir/"
		echo "$common" >"$dir/.from"
	fi
	export BCC_KERNEL_SOURCE="$dir"
}
bcc=1 libbpf=1
if ! command -v offcputime-bpfcc >/dev/null; then
	bcc=0; echo "offcputime-bpfcc is missing: run tests/install-deps.sh bench (as root)" >"$OUT/bcc.why"
elif ! bcc_headers; then
	bcc=0; echo "no kernel headers for BCC: run tests/install-deps.sh bench (as root)" >"$OUT/bcc.why"
fi
OFFCPUTIME=$(command -v offcputime || echo /usr/sbin/offcputime)
[ -x "$OFFCPUTIME" ] || { libbpf=0; echo "offcputime (libbpf-tools) is missing: run tests/install-deps.sh bench (as root)" >"$OUT/libbpf.why"; }

for i in $(seq "$ROUNDS"); do
	untraced
	[ $bcc = 1 ] && { by_pid bcc offcputime-bpfcc -f || bcc=0; }
	[ $libbpf = 1 ] && { by_pid libbpf "$OFFCPUTIME" || libbpf=0; }
	under_bpftrace
	under_probee fp fp
	under_probee dwarf auto
	under_probee wakers auto --wakers
done
[ -e /sys/bus/event_source/devices/kprobe ] || [ ! -e "$OUT/bcc.why" ] ||
	echo "it attaches a kprobe to finish_task_switch and this kernel has no kprobes (no kprobe PMU): $(cat "$OUT/bcc.why")" >"$OUT/bcc.why"

if [ -n "$VERBOSE" ]; then # each run's figures
	for f in base bcc libbpf bpftrace fp dwarf wakers; do
		[ -s "$OUT/$f" ] && sed "s/^/  $f: /" "$OUT/$f"
	done
fi

# median FILE COLUMN
median() { sort -n -k "$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() { # NAME LABEL
	if [ ! -s "$OUT/$1" ]; then
		printf '  %-44s skipped: %s\n' "$2" "$(cat "$OUT/$1.why" 2>/dev/null || echo "no figures")"
		return
	fi
	echo "$2|$(median "$OUT/$1" 1) $(median "$OUT/$1" 2) $(median "$OUT/$1" 4)" | awk -F'|' -v b="$bw $bs" -v ref="$ref" -v sref="$sref" '{
		split($2, t, " "); split(b, u, " ")
		w = (t[1] - u[1]) / t[2]; s = (t[3] - u[2]) / t[2]
		r = ref > 0 ? sprintf("%5.2fx  %5.2fx", w / ref, s / sref) : "    -"
		printf "  %-44s %6.3f s  %4dK/s  %7.0f ns  %7.0f ns  %s\n", $1, t[1] / 1e9, t[2] / t[1] * 1e6, w, s, r
	}'
}
cost() { # NAME [COLUMN: 1 wall (default), 4 sys]
	echo "$(median "$OUT/$1" "${2:-1}") $(median "$OUT/$1" 2)" | awk -v b="$(median "$OUT/base" "${2:-1}")" '{ print ($1 - b) / $2 }'
}
bw=$(median "$OUT/base" 1) bs=$(median "$OUT/base" 4)
# The ratios are to offcputime-bpfcc where it ran, else to its libbpf build.
ref=0 sref=0 refname=
if [ -s "$OUT/bcc" ]; then ref=$(cost bcc) sref=$(cost bcc 4) refname=offcputime-bpfcc
elif [ -s "$OUT/libbpf" ]; then ref=$(cost libbpf) sref=$(cost libbpf 4) refname="offcputime (libbpf-tools)"
fi
echo "off-CPU cost per context switch: $FIXTURE, $N round trips (2 threads, 2 pipes) x $ROUNDS rounds, medians"
printf '  %-44s %8s  %6s  %10s  %10s  %s\n' tool "loop" sw/s "wall/sw" "sys/sw" "vs ${refname:-offcputime}: wall, sys"
awk -v w="$bw" -v s="$(median "$OUT/base" 2)" -v k="$bs" 'BEGIN {
	printf "  %-44s %6.3f s  %4dK/s  (%d switches, %.0f ns sys CPU each)\n", "untraced", w / 1e9, s / w * 1e6, s, k / s }'
row bcc "offcputime-bpfcc -f (kprobe, fp)"
row libbpf "offcputime, libbpf-tools (tp_btf, fp)"
row bpftrace "bpftrace sched_switch @[kstack, ustack] (fp)"
row fp "probee --off-cpu --unwind fp"
row dwarf "probee --off-cpu (DWARF: complete stacks)"
row wakers "probee --off-cpu --wakers (each waker too)"
if [ "$ref" != 0 ] && [ -s "$OUT/dwarf" ]; then
	awk -v d="$(cost dwarf)" -v r="$ref" -v n="$refname" 'BEGIN {
		printf "  target: probee --off-cpu (DWARF) <= 0.80x %s per switch (wall): %.2fx, %s\n", n, d / r, d / r <= 0.8 ? "met" : "not met" }'
fi
