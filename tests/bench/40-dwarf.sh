#!/bin/sh
# DWARF unwinding costs (issue 6):
#  1. per-hit cost of `--unwind dwarf` at a uprobe on libc malloc in the
#     fixture built WITHOUT frame pointers, against bpftrace `@[ustack]` on
#     the frame-pointer build (which is all bpftrace can walk), interleaved
#     over ROUNDS rounds; the fixture times its own loop. Target <= 1.5x.
#  2. probee's own CPU use while sampling both CPUs at 99 Hz with both CPUs
#     busy: user + system time of the probee process from /proc/PID/stat
#     over a steady-state window of SECS seconds, which starts WARM seconds
#     after probee and ends before its final drain and write (start-up and
#     symbolization are not sampling costs). Target < 1% of one core.
#     Processes started on the machine in the window are printed: each new
#     process that gets a sample costs a /proc/PID/maps read and symbol and
#     table loads for binaries not seen before.
#  3. BPF map memory of the unwind tables (binary + ld.so + libc), and
#     libc's own share.
set -e
cd "$(dirname "$0")/../.."
N=${N:-1000000}
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-10}
WARM=${WARM:-3}
FB=$PWD/tests/fixtures/bin
PROBEE=$PWD/bin/probee
for f in mallocbench-fp mallocbench-nofp spin-nofp; do
	[ -x "$FB/$f" ] || { echo "missing $FB/$f: run make fixtures" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
LIBC=$(readlink -f "$(ldd "$FB/mallocbench-nofp" | awk '/libc.so.6/ {print $3}')")

loop_ns() { sed -n 's/^mallocbench: [0-9]* calls in \([0-9]*\) ns$/\1/p'; }
untraced() { "$FB/$1" "$N" 2>&1 >/dev/null | loop_ns; }
under_bpftrace() {
	bpftrace -q -e "uprobe:$LIBC:malloc /pid == cpid/ { @[ustack] = count(); } END { clear(@); }" \
		-c "$FB/mallocbench-fp $N" 2>&1 >/dev/null | loop_ns
}
under_probee() {
	"$PROBEE" -q --unwind dwarf $PROBEE_ARGS --uprobe "$LIBC:malloc" -o /tmp/probee-bench.folded \
		-- "$FB/mallocbench-nofp" "$N" 2>&1 >/dev/null | loop_ns
}
bfp=0 bnofp=0 bt=0 pr=0
for i in $(seq "$ROUNDS"); do
	bfp=$((bfp + $(untraced mallocbench-fp)))
	bnofp=$((bnofp + $(untraced mallocbench-nofp)))
	bt=$((bt + $(under_bpftrace)))
	pr=$((pr + $(under_probee)))
done
depth=$(awk '{n = split($0, f, ";"); if (n > d) d = n} END {print d - 2}' /tmp/probee-bench.folded)
rm -f /tmp/probee-bench.folded
awk -v bf="$bfp" -v bn="$bnofp" -v t="$bt" -v p="$pr" -v n="$N" -v r="$ROUNDS" -v d="$depth" 'BEGIN {
	h = n * r; bt = (t - bf) / h; pr = (p - bn) / h
	printf "uprobe libc:malloc, %d calls x %d rounds\n", n, r
	printf "  bpftrace @[ustack], FP build     %8.1f ns/hit\n", bt
	printf "  probee --unwind dwarf, no-FP build %6.1f ns/hit (stacks %d frames deep)\n", pr, d
	printf "  probee/bpftrace                  %8.2fx (target <= 1.5x)\n", pr / bt
}'

# Sampling: both CPUs busy, probee samples every CPU at 99 Hz.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }     # utime + stime, in clock ticks
forks() { awk '/^processes/ {print $2}' /proc/stat; } # processes created since boot
"$FB/spin-nofp" $((WARM + SECS + 4)) & s1=$!
"$FB/spin-nofp" $((WARM + SECS + 4)) & s2=$!
"$PROBEE" -q --sample -F 99 -d "$((WARM + SECS + 2))s" -o /tmp/probee-bench.folded >/dev/null 2>&1 & p=$!
sleep "$WARM"
t0=$(ticks "$p") f0=$(forks)
sleep "$SECS"
t1=$(ticks "$p") f1=$(forks)
wait "$p" || true
kill "$s1" "$s2" 2>/dev/null || true
wait "$s1" "$s2" 2>/dev/null || true
samples=$(awk '{s += $NF} END {print s + 0}' /tmp/probee-bench.folded)
awk -v s="$SECS" -v n="$samples" -v d="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v f="$((f1 - f0))" 'BEGIN {
	cpu = d / hz
	printf "sampling 99 Hz on every CPU: %d samples; steady state %ds: probee used %.2fs CPU = %.2f%% of one core (target < 1%%; %d processes started meanwhile)\n", n, s, cpu, 100 * cpu / s, f }'
rm -f /tmp/probee-bench.folded

# Memory of the unwind tables in BPF maps.
"$PROBEE" --unwind dwarf --uprobe "$FB/mallocbench-nofp:main" -- "$FB/mallocbench-nofp" 1 2>&1 >/dev/null |
	sed -n -e 's/^probee: unwind tables: /unwind tables in BPF maps (mallocbench-nofp + ld.so + libc): /p' \
		-e 's/^probee: largest unwind table: .*libc[^,]*, \([0-9]*\) bytes$/  of which libc.so.6: \1 bytes/p'
