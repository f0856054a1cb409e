#!/bin/sh
# A long system-wide run: how long probee takes to finish and how much
# memory it holds, beside bpftrace. `probee --uprobe libc:malloc -d SECS`
# (default 12), system-wide, while a shell loop runs ls, git --version and
# python3 -c pass: ~190K hits a second, each process with stacks of its
# own (its libraries at other addresses: ~1M per-process stacks in 12 s).
# Prints the wall time past SECS (draining, symbolizing and writing the
# output once the probes are gone), CPU time, peak memory (GNU time's
# maximum resident set) and the stacks printed (probee's folded lines,
# merged by comm; bpftrace's map entries). Beside it: bpftrace
# `@[ustack] = count()` on the same function for the same time (its maps
# raised to 262144 keys; it symbolizes at exit too, an exited process's
# frames as bare addresses), and PROBEE_OLD (another probee binary) if
# given. One run each, in turn, ROUNDS times (default 1).
set -e
cd "$(dirname "$0")/../.."
PROBEE=${PROBEE:-$PWD/bin/probee}
SECS=${SECS:-12}
ROUNDS=${ROUNDS:-1}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for t in bpftrace /usr/bin/time python3 git; do
	command -v $t >/dev/null || { echo "$t is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
done
LIBC=$(readlink -f "$(ldd /bin/ls | awk '/libc.so.6/ {print $3}')")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. tests/bench/lib.sh # shell_loop

# run NAME CMD...: CMD during the shell loop, then one line of figures.
run() {
	name=$1
	shift
	shell_loop $((SECS + 1)) & loop=$!
	/usr/bin/time -o "$tmp/time" -f '%e %U %S %M' "$@" >"$tmp/out" 2>"$tmp/err" || true
	wait $loop
	if [ -f "$tmp/out.folded" ]; then
		stacks=$(wc -l <"$tmp/out.folded")
		rm -f "$tmp/out.folded"
	else
		stacks=$(grep -c '^@\[' "$tmp/out" || true)
	fi
	awk -v name="$name" -v secs="$SECS" -v stacks="$stacks" '{
		printf "  %-9s %5.1f s past the %d s  %5.1f s CPU  %5d MB peak  %7d stacks printed\n", name, $1 - secs, secs, $2 + $3, $4 / 1024, stacks
	}' "$tmp/time"
}

probee_run() { run "$1" "$2" -q --uprobe "$LIBC:malloc" -d "${SECS}s" -o "$tmp/out.folded"; }
echo "system-wide uprobe $LIBC:malloc for $SECS s during a loop of ls, git --version, python3 -c pass"
for i in $(seq "$ROUNDS"); do
	probee_run probee "$PROBEE"
	[ -z "$PROBEE_OLD" ] || probee_run old "$PROBEE_OLD"
	BPFTRACE_MAP_KEYS_MAX=262144 run bpftrace bpftrace -e "uprobe:$LIBC:malloc { @[ustack] = count(); } interval:s:$SECS { exit(); }"
done
