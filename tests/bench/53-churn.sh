#!/bin/sh
# A long system-wide run with process churn (issue 44, point 8): probee
# --sample -F 999 -d DURATION (default 10m) on every CPU while
# tests/bench/churn starts RATE (default 350) short processes a second
# (true, ls, sh, fixtures with shared libraries and dlopen, and every
# second a program and a library never seen before, with build-ids of
# their own), beside bpftrace `profile:hz:999 { @[ustack, kstack] =
# count(); }` (its maps raised to 262144 keys) on the same machine at the
# same time (PEER=0: probee alone), and PROBEE_OLD (another probee binary)
# if given, also at the same time: the machine's other work (this VM is
# shared) is then the same for all. Prints the VmRSS of each every STEP
# (default 30) seconds, probee's spread from the first minute on (target:
# within 10% of its lowest), and for each the time from the end of the
# run to its exit, its peak resident set (GNU time) and the lines or map
# entries it printed. Needs root and `make fixtures`. PROBEE picks the
# probee binary (default: built from the tree); MERGE_GONE=0 runs it with
# PROBEE_MERGE_GONE=0 (processes gone kept to the end, not merged during
# the run; MERGE_GONE=1 asks older binaries to merge them). KEEP=FILE
# copies probee's folded output to FILE. ISOLATE=1: probee traces the
# churn command's processes alone (-- CMD, probee alone), not the whole
# machine, whose other work then adds none of its own stacks. Quick run:
# DURATION=3m tests/bench/53-churn.sh
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
churn= cmd= pd=$secs
if [ "$ISOLATE" = 1 ]; then
	# probee traces churn's tree alone (-- CMD), which ends the run.
	PEER=0 PROBEE_OLD= pd=$((secs + 60))
	cmd="-- $tmp/churn -bin tests/fixtures/bin -dir $tmp -rate $RATE -d ${secs}s"
else
	"$tmp/churn" -bin tests/fixtures/bin -dir "$tmp" -rate "$RATE" -d "$((secs + 10))s" >"$tmp/churn.out" &
	churn=$!
	sleep 2
fi
PROBEE=${PROBEE:-$tmp/probee}
# start NAME CMD...: CMD under GNU time in the background (time's pid in
# $tmp/NAME.time.pid; CMD's, found a second later, in $tmp/NAME.pid).
start() {
	name=$1
	shift
	/usr/bin/time -o "$tmp/$name.time" -f '%e %M' "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	echo $! >"$tmp/$name.time.pid"
}
start probee env ${MERGE_GONE:+PROBEE_MERGE_GONE=$MERGE_GONE} "$PROBEE" -q --sample -F 999 -d "${pd}s" -o "$tmp/probee.folded" $cmd
tools=probee
if [ -n "$PROBEE_OLD" ]; then
	start old "$PROBEE_OLD" -q --sample -F 999 -d "${secs}s" -o "$tmp/old.folded"
	tools="$tools old"
fi
if [ "$PEER" = 1 ]; then
	BPFTRACE_MAP_KEYS_MAX=262144 start bpftrace bpftrace -e \
		"profile:hz:999 { @[ustack, kstack] = count(); } interval:s:$secs { exit(); }"
	tools="$tools bpftrace"
fi
sleep 1
for n in $tools; do
	until pgrep -P "$(cat "$tmp/$n.time.pid")" >"$tmp/$n.pid"; do
		kill -0 "$(cat "$tmp/$n.time.pid")" 2>/dev/null || { echo "$n ended at once:"; head -5 "$tmp/$n.err"; [ -z "$churn" ] || kill "$churn"; exit 1; }
		sleep 0.2
	done
done
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$(cat "$tmp/$1.pid")/status" 2>/dev/null || echo -; }
t=0
{ printf '  %6s' time; for n in $tools; do printf ' %12s' "$n"; done; echo; } >"$tmp/series"
while [ "$t" -lt "$secs" ]; do
	sleep "$STEP"
	t=$((t + STEP))
	[ "$t" -lt "$secs" ] || break
	{ printf '  %5ds' "$t"; for n in $tools; do printf ' %9s kB' "$(rss "$n")"; done; echo; } >>"$tmp/series"
done
for n in $tools; do wait "$(cat "$tmp/$n.time.pid")" || { [ "$n" = bpftrace ] || { cat "$tmp/$n.err"; exit 1; }; }; done
[ -z "$churn" ] || wait "$churn" || true
[ -n "$churn" ] || grep '^churn:' "$tmp/probee.out" >"$tmp/churn.out" || true
[ -z "$KEEP" ] || cp "$tmp/probee.folded" "$KEEP"
cat "$tmp/series"
col=2
for n in $tools; do
	awk -v from=60 -v c=$col -v n="$n" '$1 + 0 >= from && $c ~ /^[0-9]+$/ { if (min == "" || $c < min) min = $c; if ($c > max) max = $c }
		END { if (min) printf "  %-8s RSS from %ds on: %d-%d kB, spread %.1f%% of the lowest (target for probee: <= 10%%)\n", n, from, min, max, 100 * (max - min) / min }' "$tmp/series"
	col=$((col + 2))
done
for n in $tools; do
	case $n in
	bpftrace) what="$(grep -c '^@\[' "$tmp/bpftrace.out" || true) map entries" ;;
	*) what="$(wc -l <"$tmp/$n.folded") lines" ;;
	esac
	awk -v n="$n" -v secs="$secs" -v what="$what" '{ printf "  %-8s %6.1f s past the %d s, peak %5d MB, %s\n", n, $1 - secs, secs, $2 / 1024, what }' "$tmp/$n.time"
	grep -iE 'dropped|lost' "$tmp/$n.err" | sed "s/^/    $n: /" || true
done
sed 's/^/  /' "$tmp/churn.out"
