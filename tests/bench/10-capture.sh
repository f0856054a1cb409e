#!/bin/sh
# Per-hit cost of taking a stack at a uprobe on libc malloc: the malloc-heavy
# fixture untraced, under bpftrace `@[ustack] = count()`, and under probee,
# interleaved (ROUNDS rounds). The fixture times its own loop, so tracer
# start-up and tear-down are not counted. Prints ns per hit and the ratios
# for probee's frame-pointer walk (`--unwind fp`, like bpftrace's ustack:
# target, issue 4, <= 0.8x bpftrace) and for its default (`--unwind auto`:
# DWARF through Debian's libc, which has no frame pointers, so complete
# stacks where bpftrace's stop; target, issue 14, <= 0.8x bpftrace too). PROBEE_ARGS adds flags to both;
# PROBEE picks the binary (default bin/probee).
set -e
cd "$(dirname "$0")/../.."
N=${N:-2000000}
ROUNDS=${ROUNDS:-3}
BIN=$PWD/tests/fixtures/bin/${FIXTURE:-mallocbench-fp}
PROBEE=${PROBEE:-$PWD/bin/probee}
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
LIBC=$(ldd "$BIN" | awk '/libc.so.6/ {print $3}')
LIBC=$(readlink -f "$LIBC")

loop_ns() { sed -n 's/^mallocbench: [0-9]* calls in \([0-9]*\) ns$/\1/p'; }
untraced() { "$BIN" "$N" 2>&1 >/dev/null | loop_ns; }
under_bpftrace() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @[ustack] = count(); } END { clear(@); }" \
		-c "$BIN $N" 2>&1 >/dev/null | loop_ns
}
under_probee() { # UNWIND
	"$PROBEE" -q --unwind "$1" $PROBEE_ARGS --uprobe "$LIBC:malloc" -o /tmp/probee-bench.folded \
		-- "$BIN" "$N" 2>&1 >/dev/null | loop_ns
}
base=0 bt=0 fp=0 auto=0
for i in $(seq "$ROUNDS"); do
	base=$((base + $(untraced)))
	bt=$((bt + $(under_bpftrace)))
	fp=$((fp + $(under_probee fp)))
	auto=$((auto + $(under_probee auto)))
done
rm -f /tmp/probee-bench.folded
awk -v b="$base" -v t="$bt" -v p="$fp" -v a="$auto" -v n="$N" -v r="$ROUNDS" -v f="$(basename "$BIN")" 'BEGIN {
	h = n * r; bt = (t - b) / h; fp = (p - b) / h; au = (a - b) / h
	printf "uprobe libc:malloc + user stack, %s, %d calls x %d rounds\n", f, n, r
	printf "  untraced                  %8.1f ns/call\n", b / h
	printf "  bpftrace ustack           %8.1f ns/hit\n", bt
	printf "  probee --unwind fp        %8.1f ns/hit  %5.2fx bpftrace (target <= 0.80x)\n", fp, fp / bt
	printf "  probee --unwind auto      %8.1f ns/hit  %5.2fx bpftrace (target <= 0.80x; DWARF through libc: complete stacks)\n", au, au / bt
}'
