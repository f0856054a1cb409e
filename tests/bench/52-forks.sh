#!/bin/sh
# Long runs on a busy machine: probee's memory (VmRSS) while it samples
# every CPU at 99 Hz for DURATION (default 60s) and a shell loop starts
# processes as fast as it can (hundreds a second). The kernel reports the
# mappings of every new process; probee forgets those of processes that
# never hit a probe (resolver.Symbolizer.Prune), so RSS grows only with the
# processes that were sampled. Prints the RSS series every STEP seconds and
# the growth per 1000 processes started. Needs root.
set -e
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-60}
STEP=${STEP:-10}
WARM=${WARM:-20} # seconds before the growth is measured (the prune grace is 10 s)
echo "== 52-forks: probee RSS over ${DURATION}s of --sample -F 99 while processes start =="
. tests/bench/lib.sh
bench_setup /bin/true
procs() { awk '/^processes/ {print $2}' /proc/stat; }
(end=$(($(date +%s) + DURATION + 2)); while [ "$(date +%s)" -lt "$end" ]; do /bin/true; done) &
loop=$!
"$tmp/probee" -q --sample -F 99 -d "${DURATION}s" -o "$tmp/out.folded" 2>"$tmp/stderr" &
pid=$!
series="" t=0 first="" p0=""
while sleep "$STEP"; do
	t=$((t + STEP))
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
	[ -n "$rss" ] || break
	p=$(procs)
	[ "$t" -lt "$WARM" ] || [ -n "$first" ] || { first=$rss; p0=$p; }
	last=$rss p1=$p
	series="$series ${t}s=${rss}kB"
done
wait "$pid" || { cat "$tmp/stderr"; exit 1; }
kill "$loop" 2>/dev/null || true
n=$((p1 - p0))
echo "rss:$series"
echo "from ${WARM}s to the end: $n processes started, rss $first -> $last kB" \
	"($(( (last - first) * 1000 / (n > 0 ? n : 1) )) kB per 1000 processes)"
