#!/bin/sh
# Finishing a run with 2M distinct stacks (issue 44, point 8): a uprobe on
# manystacks-fp's leaf() while it makes N calls (default 2097152) down
# LEVELS levels (default 21), each call through a path of its own: N
# distinct user stacks of LEVELS*2+4 frames. Prints for each tool the
# hits or stacks it reported, the time from the traced command's end to
# the tool's exit (draining, symbolizing, writing: target < 30 s), its peak
# resident set (GNU time; target < 1 GB) and CPU time. Beside probee
# (`-o out.folded`; PROBEE picks the binary, default bin/probee; MAX_STACKS
# sets --max-stacks): bpftrace `@[ustack] = count()` with its maps at
# BT_KEYS keys (default 262144: its stack map is preallocated, 1 KB a key,
# so it keeps what fits and loses the rest; PEER=0 skips it). Quick run:
# N=262144 LEVELS=18 tests/bench/13-many-stacks-finish.sh
set -e
cd "$(dirname "$0")/../.."
N=${N:-2097152}
LEVELS=${LEVELS:-21}
PEER=${PEER:-1}
BT_KEYS=${BT_KEYS:-262144}
BIN=$PWD/tests/fixtures/bin/manystacks-fp
PROBEE=${PROBEE:-$PWD/bin/probee}
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in bpftrace /usr/bin/time; do
	command -v $t >/dev/null || { echo "$t is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed NAME FUNC: FUNC traces `manystacks N LEVELS` (which writes the time
# it ended) under GNU time, output in $tmp/out and $tmp/err; prints one
# line of figures.
cmdline="$BIN $N $LEVELS; date +%s.%N >$tmp/ended"
timed() {
	name=$1
	$2 >"$tmp/out" 2>"$tmp/err" || { tail -5 "$tmp/err"; return 1; }
	end=$(date +%s.%N)
	awk -v name="$name" -v end="$end" -v ended="$(cat "$tmp/ended")" -v what="$(stacks "$name")" '{
		printf "  %-9s %-28s finish %6.1f s  peak %5d MB  CPU %6.1f s\n", name, what, end - ended, $3 / 1024, $1 + $2
	}' "$tmp/time"
	grep -iE 'dropped|lost' "$tmp/err" | sed "s/^/    $name: /" || true
}
stacks() {
	case $1 in
	bpftrace) echo "$(grep -c '^@\[' "$tmp/out" || true) stacks printed" ;;
	*) echo "$(wc -l <"$tmp/out.folded") stacks, $(awk '{n += $NF} END {print n}' "$tmp/out.folded") hits" ;;
	esac
}
probee_run() {
	/usr/bin/time -o "$tmp/time" -f '%U %S %M' "$PROBEE" ${MAX_STACKS:+--max-stacks "$MAX_STACKS"} \
		--uprobe "$BIN:leaf" -o "$tmp/out.folded" -- /bin/sh -c "$cmdline"
}
# bpftrace_run: bpftrace's -c splits its command at spaces, so it traces
# system-wide; the command runs once it has attached, and SIGINT stops it.
bpftrace_run() {
	BPFTRACE_MAP_KEYS_MAX=$BT_KEYS /usr/bin/time -o "$tmp/time" -f '%U %S %M' bpftrace -e "uprobe:$BIN:leaf { @[ustack] = count(); }" &
	bt=$!
	while ! grep -qs Attaching "$tmp/out" "$tmp/err"; do sleep 0.2; done
	sleep 1 # its SIGINT handler
	sh -c "$cmdline"
	kill -INT "$(pgrep -P "$bt")"
	wait "$bt"
}
echo "uprobe manystacks-fp:leaf, $N calls down $LEVELS levels (one distinct stack each)"
timed probee probee_run
[ "$PEER" = 0 ] || timed bpftrace bpftrace_run
