#!/bin/sh
# Per-hit cost of --latency (issue 16) on libc malloc: the malloc-heavy
# fixture untraced, under bpftrace scripts doing the same job, and under
# probee, interleaved (ROUNDS rounds). The fixture times its own loop, so
# tracer start-up and tear-down are not counted. A "hit" is one call:
# entry and return.
#   - bpftrace hist: @start[tid] = nsecs at the entry; at the uretprobe
#     @h = hist(nsecs - @start[tid]) (funclatency's job, no stacks);
#   - bpftrace per stack: the same, plus the entry's ustack kept per tid
#     and the time summed per stack (probee --latency's job);
#   - probee --latency with --unwind fp (the same frame-pointer stacks as
#     bpftrace's ustack) and the default (DWARF through Debian's libc,
#     which has no frame pointers: complete stacks).
# Knobs: N calls per round, ROUNDS, PROBEE (default bin/probee).
set -e
cd "$(dirname "$0")/../.."
N=${N:-1000000}
ROUNDS=${ROUNDS:-3}
BIN=$PWD/tests/fixtures/bin/mallocbench-fp
PROBEE=${PROBEE:-$PWD/bin/probee}
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
LIBC=$(readlink -f "$(ldd "$BIN" | awk '/libc.so.6/ {print $3}')")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

loop_ns() { sed -n 's/^mallocbench: [0-9]* calls in \([0-9]*\) ns$/\1/p'; }
untraced() { "$BIN" "$N" 2>&1 >/dev/null | loop_ns; }
bt_hist() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @start[tid] = nsecs; }
uretprobe:$LIBC:malloc /@start[tid]/ { @h = hist(nsecs - @start[tid]); delete(@start[tid]); }
END { clear(@start); clear(@h); }" -c "$BIN $N" 2>&1 >/dev/null | loop_ns
}
bt_stacks() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @start[tid] = nsecs; @stk[tid] = ustack; }
uretprobe:$LIBC:malloc /@start[tid]/ { @ns[@stk[tid]] = sum(nsecs - @start[tid]); @h = hist(nsecs - @start[tid]);
	delete(@start[tid]); delete(@stk[tid]); }
END { clear(@start); clear(@stk); clear(@ns); clear(@h); }" -c "$BIN $N" 2>&1 >/dev/null | loop_ns
}
under_probee() { # UNWIND
	"$PROBEE" -q --latency --unwind "$1" --uprobe "$LIBC:malloc" -o "$OUT/x.folded" \
		-- "$BIN" "$N" 2>&1 >/dev/null | loop_ns
}
base=0 bh=0 bs=0 fp=0 auto=0
for i in $(seq "$ROUNDS"); do
	base=$((base + $(untraced)))
	bh=$((bh + $(bt_hist)))
	bs=$((bs + $(bt_stacks)))
	fp=$((fp + $(under_probee fp)))
	auto=$((auto + $(under_probee auto)))
done
awk -v b="$base" -v h="$bh" -v s="$bs" -v p="$fp" -v a="$auto" -v n="$N" -v r="$ROUNDS" 'BEGIN {
	c = n * r; bh = (h - b) / c; bs = (s - b) / c; fp = (p - b) / c; au = (a - b) / c
	printf "latency of libc malloc (entry + return), mallocbench-fp, %d calls x %d rounds\n", n, r
	printf "  untraced                      %8.1f ns/call\n", b / c
	printf "  bpftrace @start[tid] + hist   %8.1f ns/call (no stacks)\n", bh
	printf "  bpftrace + ustack per stack   %8.1f ns/call\n", bs
	printf "  probee --latency --unwind fp  %8.1f ns/call  %5.2fx bpftrace per stack\n", fp, fp / bs
	printf "  probee --latency (auto)       %8.1f ns/call  %5.2fx bpftrace per stack (DWARF through libc: complete stacks)\n", au, au / bs
}'
