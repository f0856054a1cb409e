#!/bin/sh
# Listing speed: `probee --list-probes '<libc>:*'` vs `bpftrace -l 'uprobe:<libc>:*'`,
# warm (one untimed run each first), interleaved, ROUNDS runs each; prints the
# median wall time of each, the number of lines, and probee/bpftrace.
# Target (issue 3): probee <= 1.0x bpftrace warm. probee lists one line per
# address (aliases merged), bpftrace one per name, so probee prints fewer lines.
# Also runs BenchmarkResolveLibcAll (the resolver alone, in-process).
set -e
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-15}
PROBEE=$PWD/bin/probee
LIBC=$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ {print $NF; exit}')
LIBC=$(readlink -f "${LIBC:-/lib/x86_64-linux-gnu/libc.so.6}")
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

now() { date +%s%N; }
timed() { s=$(now); "$@" >"$OUT/lines" 2>/dev/null; e=$(now); echo $((e - s)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { awk -v ns="$1" 'BEGIN {printf "%.1f ms", ns/1e6}'; }

bt() { bpftrace -l "uprobe:$LIBC:*"; }
pr() { "$PROBEE" --list-probes "$LIBC:*"; }

have_probee=no
if [ -x "$PROBEE" ] && "$PROBEE" --list-probes "$LIBC:malloc" >/dev/null 2>&1; then have_probee=yes; fi

bt >/dev/null 2>&1
bt_lines=$(bt 2>/dev/null | wc -l)
if [ $have_probee = yes ]; then pr >/dev/null; pr_lines=$(pr | wc -l); fi
: >"$OUT/bt.t"; : >"$OUT/pr.t"
i=0
while [ $i -lt "$ROUNDS" ]; do
	timed bt >>"$OUT/bt.t"
	[ $have_probee = yes ] && timed pr >>"$OUT/pr.t"
	i=$((i + 1))
done
bt_ns=$(median <"$OUT/bt.t")
echo "bpftrace -l 'uprobe:$LIBC:*': $(ms "$bt_ns") median of $ROUNDS, $bt_lines lines"
if [ $have_probee = yes ]; then
	pr_ns=$(median <"$OUT/pr.t")
	echo "probee --list-probes '$LIBC:*': $(ms "$pr_ns") median of $ROUNDS, $pr_lines lines"
	awk -v p="$pr_ns" -v b="$bt_ns" 'BEGIN {printf "probee/bpftrace: %.2fx (target <= 1.0x)\n", p/b}'
else
	echo "probee --list-probes not available (build bin/probee with the flag wired): resolver benchmark only"
fi
go test -run '^$' -bench BenchmarkResolveLibcAll -benchtime 20x ./resolver/ | grep -E '^Benchmark'
