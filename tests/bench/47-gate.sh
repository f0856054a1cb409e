#!/bin/sh
# What the ld.so gate costs a traced command: under --unwind dwarf or auto
# every process start in the traced tree (and every dlopen) waits until
# probee has loaded its unwind tables; under --unwind fp nothing waits.
# Runs a shell loop starting N short processes, bare, under --unwind fp and
# under --unwind auto, and prints the wall time and the wait per process.
set -e
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
bench_setup /bin/true
N=${N:-1000}
loop="for i in \$(seq $N); do /bin/true; done"
wall() { # wall-clock seconds of "$@", best of 3
	best=
	for _ in 1 2 3; do
		s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
		best=$(echo "$s $e $best" | awk '{ d = $2 - $1; print ($3 == "" || d < $3) ? d : $3 }')
	done
	echo "$best"
}
bare=$(wall sh -c "$loop")
fp=$(wall "$tmp/probee" -q --unwind fp --uprobe libc:malloc -o "$tmp/fp.folded" -- sh -c "$loop")
auto=$(wall "$tmp/probee" -q --unwind auto --uprobe libc:malloc -o "$tmp/auto.folded" -- sh -c "$loop")
echo "ld.so gate: $N process starts under probee (best of 3)"
awk -v n="$N" -v b="$bare" -v f="$fp" -v a="$auto" 'BEGIN {
	printf "  bare %.2f s; --unwind fp %.2f s; --unwind auto %.2f s\n", b, f, a
	printf "  gate wait: %.2f ms per process start (auto minus fp)\n", (a - f) * 1000 / n
}'
