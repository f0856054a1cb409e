#!/bin/sh
# Per-hit cost of taking a stack at a uprobe on libc malloc: the malloc-heavy
# fixture untraced, under bpftrace `@[ustack] = count()`, and under probee,
# interleaved (ROUNDS rounds). The fixture times its own loop, so tracer
# start-up and tear-down are not counted. Prints ns per hit and the ratio.
# Target (issue 4): probee <= 0.8x bpftrace.
set -e
cd "$(dirname "$0")/../.."
N=${N:-2000000}
ROUNDS=${ROUNDS:-3}
BIN=$PWD/tests/fixtures/bin/${FIXTURE:-mallocbench-fp}
PROBEE=$PWD/bin/probee
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null
LIBC=$(ldd "$BIN" | awk '/libc.so.6/ {print $3}')
LIBC=$(readlink -f "$LIBC")

loop_ns() { sed -n 's/^mallocbench: [0-9]* calls in \([0-9]*\) ns$/\1/p'; }
untraced() { "$BIN" "$N" 2>&1 >/dev/null | loop_ns; }
under_bpftrace() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @[ustack] = count(); } END { clear(@); }" \
		-c "$BIN $N" 2>&1 >/dev/null | loop_ns
}
under_probee() {
	"$PROBEE" -q $PROBEE_ARGS --uprobe "$LIBC:malloc" -o /tmp/probee-bench.folded -- "$BIN" "$N" 2>&1 >/dev/null | loop_ns
}
base=0 bt=0 pr=0
for i in $(seq "$ROUNDS"); do
	base=$((base + $(untraced)))
	bt=$((bt + $(under_bpftrace)))
	pr=$((pr + $(under_probee)))
done
rm -f /tmp/probee-bench.folded
awk -v b="$base" -v t="$bt" -v p="$pr" -v n="$N" -v r="$ROUNDS" -v f="$(basename "$BIN")" 'BEGIN {
	h = n * r; bt = (t - b) / h; pr = (p - b) / h
	printf "uprobe libc:malloc + user stack, %s, %d calls x %d rounds\n", f, n, r
	printf "  untraced        %8.1f ns/call\n", b / h
	printf "  bpftrace ustack %8.1f ns/hit\n", bt
	printf "  probee          %8.1f ns/hit\n", pr
	printf "  probee/bpftrace %8.2fx (target <= 0.80x)\n", pr / bt
}'
