#!/bin/sh
# System-wide stacks of processes probee never registered (issue 15).
#
# 1. `probee --uprobe libc:malloc -d 3s`, system-wide, while a shell loop
#    runs ls, git --version and python3 -c pass: hits, partial stacks (taken
#    before a file's table was loaded, or cut at an unknown pc) and the
#    share of [truncated] stacks. Target: partial <= 1% of hits. Beside
#    it, the same with PROBEE_NO_DEFER=1 (first stacks of binaries never
#    seen walked with frame pointers instead of finished in user space),
#    and PROBEE_OLD (a probee binary from before file tables) if given.
# 2. Per-hit cost of finding tables by file (bpf_find_vma) against the
#    per-process mapping arrays, on the no-frame-pointer malloc fixture
#    (N calls, the fixture times its own loop): `-- CMD` (arrays, find_vma
#    only where they miss), `-- CMD` with PROBEE_NO_FIND_VMA=1 (arrays
#    only: probee before file tables), and system-wide with the fixture
#    started after probee (never registered: every frame through find_vma).
set -e
cd "$(dirname "$0")/../.."
PROBEE=${PROBEE:-$PWD/bin/probee}
N=${N:-1000000}
BIN=$PWD/tests/fixtures/bin/mallocbench-nofp
[ -x "$BIN" ] || { echo "missing $BIN: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

. tests/bench/lib.sh # shell_loop

loop_share() { # NAME BINARY [ENV=VALUE]
	shell_loop 4 & loop=$!
	env $3 "$2" --uprobe 'libc:malloc' -d 3s -o "$OUT/sw.folded" 2>"$OUT/sw.err" || true
	wait $loop
	awk -v name="$1" -v err="$OUT/sw.err" '
		{ n = $NF; t += n; if ($0 ~ /\[truncated\]/) tr += n }
		END {
			while ((getline line < err) > 0)
				if (line ~ /partial stacks: [0-9]+/) { split(line, w, " "); p += w[4] }
				else if (line ~ /finished in user space: [0-9]+/) { split(line, w, " "); f += w[6] }
			printf "  %-9s %8d hits  partial %7d (%5.2f%%)  [truncated] %7d (%5.2f%%)  finished in user space %6d\n", name, t, p, 100*p/t, tr, 100*tr/t, f
		}' "$OUT/sw.folded"
}

echo "system-wide libc:malloc for 3 s during a loop of ls, git --version, python3 -c pass (target: partial <= 1%)"
loop_share probee "$PROBEE"
loop_share no-defer "$PROBEE" PROBEE_NO_DEFER=1
[ -n "$PROBEE_OLD" ] && loop_share old "$PROBEE_OLD"

loop_ns() { sed -n 's/^mallocbench: [0-9]* calls in \([0-9]*\) ns$/\1/p'; }
LIBC=$(readlink -f "$(ldd "$BIN" | awk '/libc.so.6/ {print $3}')")
cmd_ns() { "$PROBEE" -q --uprobe "$LIBC:malloc" -o "$OUT/c.folded" -- "$BIN" "$N" 2>&1 >/dev/null | loop_ns; }
sw_ns() {
	"$PROBEE" -q --uprobe "$LIBC:malloc" -o "$OUT/s.folded" 2>/dev/null & p=$!
	sleep 1.5; "$BIN" 0 >/dev/null 2>&1; sleep 0.5 # load the fixture's table
	"$BIN" "$N" 2>&1 >/dev/null | loop_ns
	kill -INT $p; wait $p || true
}
base=$("$BIN" "$N" 2>&1 >/dev/null | loop_ns)
arr=$(PROBEE_NO_FIND_VMA=1 cmd_ns)
cmd=$(cmd_ns)
sw=$(sw_ns)
awk -v b="$base" -v a="$arr" -v c="$cmd" -v s="$sw" -v n="$N" 'BEGIN {
	printf "per-hit cost, uprobe libc:malloc, mallocbench-nofp, %d calls (DWARF, 5 frames)\n", n
	printf "  untraced                                   %7.1f ns/call\n", b / n
	printf "  -- CMD, per-process arrays only (before)   %7.1f ns/hit\n", (a - b) / n
	printf "  -- CMD, arrays + file tables (now)         %7.1f ns/hit\n", (c - b) / n
	printf "  system-wide, file tables only (find_vma)   %7.1f ns/hit  %5.2fx the arrays\n", (s - b) / n, (s - b) / (a - b)
}'
