#!/bin/sh
# Long runs: probee's memory (VmRSS) while tracing bin/load-fp at ~RATE hits/s
# for DURATION with periodic drains (--interval INTERVAL). Prints the RSS
# series (every STEP seconds), max-min and the counts. Target: flat RSS.
# Defaults: DURATION=2m RATE=100000 INTERVAL=1s (probee's default) STEP=10; needs root and
# `make fixtures`. Quick run: DURATION=30s tests/bench/50-longrun.sh
set -e
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-2m}
RATE=${RATE:-100000}
INTERVAL=${INTERVAL:-1s}
STEP=${STEP:-10}
bin=$PWD/tests/fixtures/bin/load-fp
echo "== 50-longrun: probee RSS over $DURATION at $RATE hits/s, --interval $INTERVAL =="
. tests/bench/lib.sh
bench_setup "$bin"
# The traced command makes RATE calls a second for DURATION; probee stops
# when it exits, so calls, counts and drops can be compared exactly.
case "$DURATION" in
*m) secs=$(( ${DURATION%m} * 60 )) ;;
*s) secs=${DURATION%s} ;;
*) echo "DURATION: want Ns or Nm" >&2; exit 2 ;;
esac
calls=$(( RATE * secs ))
"$tmp/probee" --uprobe "$bin:hit" --interval "$INTERVAL" -o "$tmp/out.folded" \
	-- "$bin" "$calls" 1 "$RATE" 2>"$tmp/stderr" &
pid=$!
series=""
min=""
max=0
t=0
while sleep "$STEP"; do
	t=$((t + STEP))
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	series="$series ${t}s=${rss}kB"
	[ -z "$min" ] || [ "$rss" -lt "$min" ] && min=$rss
	[ "$rss" -gt "$max" ] && max=$rss
done
wait "$pid" || { cat "$tmp/stderr"; exit 1; }
counts=$(awk '{n += $NF} END {print n + 0}' "$tmp/out.folded")
echo "rss:$series"
echo "rss max-min: $((max - min)) kB (min $min kB, max $max kB)"
echo "calls $calls, counts $counts, $((counts / secs)) hits/s"
grep -E 'hits|drop|periodic' "$tmp/stderr" || true
