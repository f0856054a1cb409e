#!/bin/sh
# A long system-wide run with process churn (issue 44, point 8): probee
# --sample -F 999 -d DURATION (default 10m) on every CPU while
# tests/bench/churn starts RATE (default 350) short processes a second
# (true, ls, sh, fixtures with shared libraries and dlopen, and every
# second a program and a library never seen before, with build-ids of
# their own), beside bpftrace `profile:hz:999 { @[ustack, kstack] =
# count(); }` (its maps raised to 262144 keys) on the same machine at the
# same time (PEER=0: probee alone). Prints both tools' VmRSS every STEP
# (default 30) seconds, probee's spread from the first minute on (target:
# within 10% of its lowest), and for each tool the time from the end of
# the run to its exit and its peak resident set (GNU time). Needs root and
# `make fixtures`. PROBEE picks another probee binary. Quick run: DURATION=3m tests/bench/53-churn.sh
set -e
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-10m}
RATE=${RATE:-350}
STEP=${STEP:-30}
PEER=${PEER:-1}
case "$DURATION" in
*m) secs=$((${DURATION%m} * 60)) ;;
*s) secs=${DURATION%s} ;;
*) echo "DURATION: want Ns or Nm" >&2; exit 2 ;;
esac
echo "== 53-churn: system-wide --sample -F 999 for $DURATION while $RATE processes/s start =="
. tests/bench/lib.sh
bench_setup tests/fixtures/bin/uselib-fp
command -v /usr/bin/time >/dev/null || { echo "skipped: needs GNU time (tests/install-deps.sh bench)"; exit 0; }
command -v bpftrace >/dev/null || { echo "  bpftrace is missing (tests/install-deps.sh bench): probee alone"; PEER=0; }
go build -o "$tmp/churn" ./tests/bench/churn
"$tmp/churn" -bin tests/fixtures/bin -dir "$tmp" -rate "$RATE" -d "$((secs + 10))s" >"$tmp/churn.out" &
churn=$!
sleep 2
PROBEE=${PROBEE:-$tmp/probee}
/usr/bin/time -o "$tmp/p.time" -f '%e %M' "$PROBEE" -q --sample -F 999 -d "${secs}s" -o "$tmp/out.folded" 2>"$tmp/p.err" &
ptime=$!
if [ "$PEER" = 1 ]; then
	BPFTRACE_MAP_KEYS_MAX=262144 /usr/bin/time -o "$tmp/b.time" -f '%e %M' bpftrace -e \
		"profile:hz:999 { @[ustack, kstack] = count(); } interval:s:$secs { exit(); }" >"$tmp/b.out" 2>"$tmp/b.err" &
	btime=$!
fi
sleep 1
pid=$(pgrep -P "$ptime")
bpid=$([ "$PEER" = 1 ] && pgrep -P "$btime" || true)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -; }
t=0
printf '  %6s %12s %12s\n' time probee bpftrace >"$tmp/series"
while [ "$t" -lt "$secs" ]; do
	sleep "$STEP"
	t=$((t + STEP))
	[ "$t" -lt "$secs" ] || break
	printf '  %5ds %9s kB %9s kB\n' "$t" "$(rss "$pid")" "$([ -n "$bpid" ] && rss "$bpid" || echo -)" >>"$tmp/series"
done
wait "$ptime" || { cat "$tmp/p.err"; exit 1; }
[ -z "$btime" ] || wait "$btime" || true
wait "$churn" || true
cat "$tmp/series"
awk -v from=60 '$1 + 0 >= from && $2 ~ /^[0-9]+$/ { if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2 }
	END { if (min) printf "  probee RSS from %ds on: %d-%d kB, spread %.1f%% of the lowest (target <= 10%%)\n", from, min, max, 100 * (max - min) / min }' "$tmp/series"
awk -v secs="$secs" '{ printf "  probee   %6.1f s past the %d s, peak %5d MB, %d stacks\n", $1 - secs, secs, $2 / 1024, n }' n="$(wc -l <"$tmp/out.folded")" "$tmp/p.time"
[ -z "$btime" ] || awk -v secs="$secs" '{ printf "  bpftrace %6.1f s past the %d s, peak %5d MB, %d stacks\n", $1 - secs, secs, $2 / 1024, n }' n="$(grep -c '^@\[' "$tmp/b.out" || true)" "$tmp/b.time"
sed 's/^/  /' "$tmp/churn.out"
grep -iE 'drop|lost' "$tmp/p.err" | sed 's/^/  probee: /' || true
