#!/bin/sh
# Per-hit cost of taking a stack at a uprobe on libc malloc: the malloc-heavy
# fixture untraced, under bpftrace `@[ustack] = count()`, and under probee,
# interleaved (ROUNDS rounds), printing ns per hit and probee/bpftrace.
# Target (issue 4): probee <= 0.8x bpftrace.
set -e
cd "$(dirname "$0")/../.."
N=${N:-2000000}
ROUNDS=${ROUNDS:-3}
BIN=$PWD/tests/fixtures/bin/mallocbench-fp
PROBEE=$PWD/bin/probee
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bpftrace >/dev/null
LIBC=$(ldd "$BIN" | awk '/libc.so.6/ {print $3}')
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

now() { date +%s%N; }
# Time only the traced program: each tracer runs it as its child command.
untraced() { s=$(now); "$BIN" "$N"; e=$(now); echo $((e - s)); }
under_bpftrace() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @[ustack] = count(); } END { clear(@); }" \
		-c "$PWD/tests/bench/timeit.sh $OUT/bt $BIN $N" >/dev/null 2>&1
	cat "$OUT/bt"
}
under_probee() {
	"$PROBEE" -q --uprobe "$LIBC:malloc" -o "$OUT/p.folded" -- "$PWD/tests/bench/timeit.sh" "$OUT/pr" "$BIN" "$N" >/dev/null 2>&1
	cat "$OUT/pr"
}
base=0 bt=0 pr=0
for i in $(seq "$ROUNDS"); do
	base=$((base + $(untraced)))
	bt=$((bt + $(under_bpftrace)))
	pr=$((pr + $(under_probee)))
done
hits=$((N * ROUNDS))
awk -v b="$base" -v t="$bt" -v p="$pr" -v h="$hits" -v n="$N" 'BEGIN {
	bt = (t - b) / h; pr = (p - b) / h
	printf "malloc uprobe + user stack, %d calls x %d rounds\n", n, h / n
	printf "  untraced        %8.1f ns/call\n", b / h
	printf "  bpftrace ustack %8.1f ns/hit\n", bt
	printf "  probee          %8.1f ns/hit\n", pr
	printf "  probee/bpftrace %8.2fx (target <= 0.80x)\n", pr / bt
}'
