#!/bin/sh
# Exact counts under load (issue 9): bin/load-fp calls hit() CALLS times from
# each of 2 threads (default 5000000: 10 million calls) under
# `probee --uprobe load-fp:hit` with periodic drains every 1s (the default).
# Prints calls, counts, drops and the time per hit. Target: counts + drops =
# calls. UNWIND (default fp) picks --unwind. Needs root and `make fixtures`.
set -e
cd "$(dirname "$0")/../.."
CALLS=${CALLS:-5000000}
UNWIND=${UNWIND:-fp}
bin=$PWD/tests/fixtures/bin/load-fp
echo "== 55-load: $((2 * CALLS)) calls from 2 threads, --unwind $UNWIND =="
. tests/bench/lib.sh
bench_setup "$bin"
start=$(date +%s%N)
"$tmp/probee" --uprobe "$bin:hit" --unwind "$UNWIND" --interval 1s -o "$tmp/out.folded" \
	-- "$bin" "$CALLS" 2 2>"$tmp/stderr" || { cat "$tmp/stderr"; exit 1; }
ns=$(( $(date +%s%N) - start ))
calls=$((2 * CALLS))
counts=$(awk '{n += $NF} END {print n + 0}' "$tmp/out.folded")
drops=$(awk '/warning: dropped/ {n += $4} END {print n + 0}' "$tmp/stderr")
echo "calls $calls, counts $counts, drops $drops, $((ns / calls)) ns/hit (wall, 2 threads)"
grep -E 'drop|periodic' "$tmp/stderr" || true
if [ $((counts + drops)) -ne "$calls" ]; then
	echo "FAIL: counts + drops != calls" >&2
	exit 1
fi
