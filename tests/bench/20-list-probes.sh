#!/bin/sh
# Listing speed: `probee --list-probes SPEC` vs `bpftrace -l 'uprobe:FILE:*'`,
# warm (one untimed run each first), interleaved, ROUNDS runs each; prints
# the median wall time of each, the number of lines, and probee/bpftrace:
#   libc '*'                         target (issue 3): <= 1.0x
#   libLLVM '*' (34000 C++ names)    target (issue 14): <= 1.0x
#   libLLVM demangled glob           bpftrace has no equivalent (it lists raw
#                                    names): compared with its '*' listing,
#                                    target <= 1.0x too
# libLLVM is Debian's libllvm14; its rows are skipped, with a message, when
# the file is missing. probee lists one line per address (aliases merged),
# bpftrace one per name, so probee prints fewer lines. PROBEE=path compares
# another build. Also runs the resolver benchmarks (in-process).
set -e
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-15}
PROBEE=${PROBEE:-$PWD/bin/probee}
LIBC=$(ldconfig -p | awk '$1 == "libc.so.6" && /x86-64/ {print $NF; exit}')
LIBC=$(readlink -f "${LIBC:-/lib/x86_64-linux-gnu/libc.so.6}")
LLVM=/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1
DEMANGLED='libLLVM-14:demangle:llvm::SmallVectorBase<*>::grow_pod*'
command -v bpftrace >/dev/null || { echo "bpftrace is missing: run tests/install-deps.sh bench (as root)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

now() { date +%s%N; }
timed() { s=$(now); "$@" >/dev/null 2>&1; e=$(now); echo $((e - s)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ms() { awk -v ns="$1" 'BEGIN {printf "%.1f ms", ns/1e6}'; }

have_probee=no
if [ -x "$PROBEE" ] && "$PROBEE" --list-probes "$LIBC:malloc" >/dev/null 2>&1; then have_probee=yes; fi

# compare FILE SPEC TARGET: bpftrace -l of every function of FILE against
# probee --list-probes SPEC.
compare() {
	file=$1 spec=$2 target=$3
	bpftrace -l "uprobe:$file:*" >/dev/null 2>&1
	bt_lines=$(bpftrace -l "uprobe:$file:*" 2>/dev/null | wc -l)
	if [ $have_probee = yes ]; then
		"$PROBEE" --list-probes "$spec" >/dev/null
		pr_lines=$("$PROBEE" --list-probes "$spec" | wc -l)
	fi
	: >"$OUT/bt.t"
	: >"$OUT/pr.t"
	i=0
	while [ $i -lt "$ROUNDS" ]; do
		timed bpftrace -l "uprobe:$file:*" >>"$OUT/bt.t"
		[ $have_probee = yes ] && timed "$PROBEE" --list-probes "$spec" >>"$OUT/pr.t"
		i=$((i + 1))
	done
	bt_ns=$(median <"$OUT/bt.t")
	echo "bpftrace -l 'uprobe:$file:*': $(ms "$bt_ns") median of $ROUNDS, $bt_lines lines"
	[ $have_probee = yes ] || return 0
	pr_ns=$(median <"$OUT/pr.t")
	echo "probee --list-probes '$spec': $(ms "$pr_ns") median of $ROUNDS, $pr_lines lines"
	awk -v p="$pr_ns" -v b="$bt_ns" -v t="$target" 'BEGIN {printf "probee/bpftrace: %.2fx (target %s)\n", p/b, t}'
}

compare "$LIBC" "$LIBC:*" "<= 1.0x"
if [ -e "$LLVM" ]; then
	compare "$LLVM" "libLLVM-14:*" "<= 1.0x"
	compare "$LLVM" "$DEMANGLED" "<= 1.0x of bpftrace's '*' listing"
else
	echo "skipped libLLVM: $LLVM is missing (apt-get install libllvm14)"
fi
[ $have_probee = yes ] || echo "probee --list-probes not available (make build): resolver benchmarks only"
go test -run '^$' -bench 'BenchmarkResolve(LibcAll|LLVM)' -benchtime 20x ./resolver/ | grep -E '^Benchmark'
