#!/bin/sh
# Per-hit cost of a stack never seen before: a uprobe on manystacks-fp's
# left(), where N calls through distinct paths give ~11N hits and ~4.6N
# distinct stacks (N=20000: 220,784 hits, 92,767 stacks), under bpftrace
# `@[ustack] = count()` (its maps raised to 262144 keys, so that it keeps
# what it can) and under probee (`--unwind fp` and the default), interleaved
# (ROUNDS rounds). The fixture times its own loop, so tracer start-up and
# the end-of-run output are not counted. Prints ns per hit above the
# untraced loop, the ratio to bpftrace, the distinct stacks each tool
# reported (bpftrace's stack map loses the stacks whose ids collide) and
# each tool's peak memory (maximum resident set, GNU time, last round).
# PROBEE picks the binary (default bin/probee).
set -e
cd "$(dirname "$0")/../.."
N=${N:-20000}
ROUNDS=${ROUNDS:-3}
BIN=$PWD/tests/fixtures/bin/manystacks-fp
PROBEE=${PROBEE:-$PWD/bin/probee}
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in bpftrace /usr/bin/time; do
	command -v $t >/dev/null || { echo "$t is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# loop_ns and hits read the fixture's line: "manystacks: N calls, L left calls in T ns".
loop_ns() { sed -n 's/^manystacks: .* in \([0-9]*\) ns$/\1/p' "$1"; }
untraced() { "$BIN" "$N" 2>"$tmp/err" >/dev/null; loop_ns "$tmp/err"; }
under_bpftrace() {
	BPFTRACE_MAP_KEYS_MAX=262144 /usr/bin/time -o "$tmp/bt.rss" -f %M bpftrace -e "uprobe:$BIN:left { @[ustack] = count(); }" \
		-c "$BIN $N" >"$tmp/bt.out" 2>"$tmp/err"
	grep -c '^@\[' "$tmp/bt.out" >"$tmp/bt.stacks" || true
	loop_ns "$tmp/err"
}
under_probee() { # UNWIND
	/usr/bin/time -o "$tmp/$1.rss" -f %M "$PROBEE" -q --unwind "$1" --uprobe "$BIN:left" -o "$tmp/p.folded" -- "$BIN" "$N" 2>"$tmp/err" >/dev/null
	wc -l <"$tmp/p.folded" >"$tmp/$1.stacks"
	loop_ns "$tmp/err"
}
"$BIN" "$N" 2>"$tmp/err" >/dev/null
hits=$(sed -n 's/^manystacks: .*, \([0-9]*\) left calls.*/\1/p' "$tmp/err")
base=0 bt=0 fp=0 auto=0
for i in $(seq "$ROUNDS"); do
	base=$((base + $(untraced)))
	bt=$((bt + $(under_bpftrace)))
	fp=$((fp + $(under_probee fp)))
	auto=$((auto + $(under_probee auto)))
done
awk -v b="$base" -v t="$bt" -v p="$fp" -v a="$auto" -v h="$hits" -v r="$ROUNDS" -v n="$N" \
	-v bs="$(cat "$tmp/bt.stacks")" -v fs="$(cat "$tmp/fp.stacks")" -v as="$(cat "$tmp/auto.stacks")" \
	-v bm="$(cat "$tmp/bt.rss")" -v fm="$(cat "$tmp/fp.rss")" -v am="$(cat "$tmp/auto.rss")" 'BEGIN {
	hr = h * r; bt = (t - b) / hr; fp = (p - b) / hr; au = (a - b) / hr
	printf "uprobe manystacks-fp:left, mostly new stacks: N=%d, %d hits x %d rounds\n", n, h, r
	printf "  untraced                  %8.1f ns/call\n", b / hr
	printf "  bpftrace ustack           %8.1f ns/hit                   %6d stacks reported  %4d MB peak\n", bt, bs, bm / 1024
	printf "  probee --unwind fp        %8.1f ns/hit  %5.2fx bpftrace %6d stacks reported  %4d MB peak\n", fp, fp / bt, fs, fm / 1024
	printf "  probee --unwind auto      %8.1f ns/hit  %5.2fx bpftrace %6d stacks reported  %4d MB peak\n", au, au / bt, as, am / 1024
}'
