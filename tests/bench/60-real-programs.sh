#!/bin/sh
# Real programs under probee and under perf (issue 14). Each workload runs
# under `probee --sample -F 999` and (twice) under
# `perf record -F 999` (`--call-graph dwarf,65528` for native code: perf's
# largest stack copy, which cuts fewest deep stacks; `-g` for
# node, which names JIT frames from its --perf-basic-prof map); then
# tests/bench/stackcmp folds `perf script` the way probee collapses stacks and
# prints, probee | perf: samples, the share of samples whose root is the
# outermost frame (_start, _dl_start_user or a thread entry), mean depth in
# user frames, and the overlap of the caller-chain distributions (see
# tests/bench/stackcmp/doc.go for the rules) beside the overlap of two perf
# runs (perf runs twice: the noise ceiling), plus for node the share of
# samples with a named JS frame. perf -g cannot walk libc (no frame
# pointers), so node's chains are compared from __libc_start_call_main on.
# For node, perf samples every CPU (-a, its samples of node kept), as probee
# does: perf's default timers are per thread, and a thread's last part
# period is never sampled. The threads row shows the difference: the
# samples of 200 threads of 0.5 ms each under probee, perf record and perf
# record -a.
# Targets: reach >= 95% and never below perf's, overlap >= 85%, node's named
# JS share >= perf's; the last lines say per target whether every workload
# met it. Probee's warnings and partial-stack counts follow each table.
#
# The sampled overlap of a compiler cannot reach 85%: its stacks are deep
# and varied, most caller chains are rare, and two perf runs of the same
# compile share only ~30% of their chain distributions (the ceiling the
# table prints). So clang++ and rustc also run as *-uprobe workloads: the
# stacks of every call of one function (a uprobe at its entry, the same
# calls with the same stacks in every run; perf against itself ~100%),
# where the overlap measures unwinding alone, under its own target. And
# they run as *-faults workloads: every page fault of one execution,
# traced by both tools at once. A fault happens wherever code first
# touches a page, mid-function at any depth, like a timer sample, but
# both tools see the same faults: the overlap is unwinding alone again,
# over the whole compile (clang++ ~24K faults, rustc ~34K). node-events
# does the same for JS frames: every getppid call a fib recursion makes
# (perf -g does not see the caller of libc's getppid wrapper, which makes
# no frame: stackcmp -fp-leaf leaves it out of probee's stacks too).
#
# Workloads, with inputs generated in a temporary directory:
#   threads   tests/fixtures/bin/shortthreads-nofp 200 500: sample counts only
#   xz        xz -9 -T1 of ~XZ_MB MB of base64 noise mixed with repeated text
#   clang++   clang++ -O2 -c of a C++ file using <regex>, <map>, <iostream>
#   clang++-same    the same compile, one execution under both tools at once
#   clang++-uprobe  the same compile, every call of clang::Sema::ActOnCallExpr
#   clang++-faults  the same compile, every page fault, one execution
#   rustc     rustc -O of a small program (the toolchain's binary, not rustup's proxy)
#   rustc-uprobe    the same compile, every call of rustc's
#             SelectionContext::candidate_from_obligation
#   rustc-faults    the same compile, every page fault, one execution
#   node      node --perf-basic-prof, a recursive fib for SECS seconds
#             (NODE_RUNS runs per tool, pooled)
#   node-same one such execution under both tools at once (perf records
#             probee): the overlap without the run-to-run differences
#   node-events     the same fib reading process.ppid (a getppid system
#             call) every 8192nd fib(0): every such call of one execution
#             under both tools at once, JS frames at the same events
#   python3   a recursive function and dict work for SECS seconds
#   go        go build -a of tests/fixtures/src/gofx: the compiler and the
#             linker on the runtime and its dependencies, every package
#             built again (perf -g: Go keeps frame pointers). Chains that
#             hold runtime.morestack are compared from it on: perf's walk
#             stops at its switch to the scheduler's stack, where probee's
#             goes on through the goroutine's (2% of perf's samples)
# A workload whose tool is missing is skipped with a message.
# Knobs: SECS (default 3), XZ_MB (default 28), NODE_RUNS (default 3),
# COMPILE_RUNS (default 1: the sampled clang++ and rustc compiles, each
# tool's runs pooled; more samples raise both the overlap and its
# ceiling: with 6 runs clang++ 48.2% (perf against perf 47.9%), rustc
# 41.2% (43.6%), where one run gives 31-32% and 22-23%),
# PROBEE (default bin/probee),
# TOP=N (also print the N caller chains whose shares differ most),
# PERF_STACK=BYTES (perf's stack copy, default 65528; with 32768 perf cut a
# third of clang++'s stacks short of _start),
# PERF_DIR=DIR (where perf writes the *-faults data, up to ~2.5 GB: default
# /dev/shm when it has room, else a temporary directory),
# ONLY="NAME ..." (run only these workloads).
set -e
cd "$(dirname "$0")/../.."
ROOT=$PWD
PROBEE=${PROBEE:-$PWD/bin/probee}
SECS=${SECS:-3}
XZ_MB=${XZ_MB:-28}
NODE_RUNS=${NODE_RUNS:-3}
COMPILE_RUNS=${COMPILE_RUNS:-1}
PERF_STACK=${PERF_STACK:-65528}
# perf's data for the *-faults workloads: RAM (/dev/shm) when it has 6 GB
# free, else the temporary directory.
if [ -z "${PERF_DIR:-}" ] && [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}')" -gt 6000000 ] 2>/dev/null; then
	PERF_DIR=/dev/shm
fi
if [ "$(id -u)" != 0 ] || [ ! -f "$PROBEE" ] || [ ! -x "$PROBEE" ]; then
	echo "skipped: needs root and $PROBEE (make build)"
	exit 0
fi
if ! command -v perf >/dev/null; then
	echo "skipped: perf is missing: run tests/install-deps.sh bench (as root)"
	exit 0
fi
tmp=$(mktemp -d)
PERF_DATA=${PERF_DIR:-$tmp}/probee-bench-$$.perf.data
trap 'rm -rf "$tmp" "$PERF_DATA"' EXIT
go build -o "$tmp/stackcmp" ./tests/bench/stackcmp
PROBEE=$(readlink -f "$PROBEE")
W=$tmp/work
mkdir "$W"
cd "$W" # node writes isolate-*-v8.log files here

# JIT maps node wrote (fib.js records its pid); removed after each run.
drop_perf_maps() {
	[ -f "$W/node.pids" ] || return 0
	while read -r pid; do rm -f "/tmp/perf-$pid.map"; done <"$W/node.pids"
	rm -f "$W/node.pids"
}

# probee_notes NAME: probee's warnings and partial-stack counts, without pids.
probee_notes() {
	grep -E '^(probee: (warning|partial stacks|.*drop)|/)' "$tmp/$1.probee.err" | grep -v 'no drops' |
		sed -e 's/ of pid [0-9]*//' -e 's/^/    /' | sort -u | head -8
}

# selected NAME: whether ONLY (if set) names the workload; says so if not.
selected() {
	if [ -n "${ONLY:-}" ] && ! echo " $ONLY " | grep -qF " $1 "; then
		echo "  (not in ONLY)"
		return 1
	fi
}

# perf_run RECORD-ARGS OUT -- CMD ARGS...: one `perf record RECORD-ARGS` of
# CMD, its samples appended to OUT as `perf script` text; samples perf lost
# are said. CMD's stderr goes to $cmd_err (default: with perf's). With
# percpu=1, perf samples every CPU (-a) and only the processes node.pids
# names are kept: per-CPU timers, as probee's (see the threads row).
cmd_err=
percpu=
perf_run() {
	rec=$1 out=$2
	shift 3
	[ -z "$percpu" ] || rec="-a $rec"
	# shellcheck disable=SC2086
	perf record -q -N $rec -o "$tmp/perf.data" -- "$@" >/dev/null 2>>"${cmd_err:-$tmp/perf.err}" ||
		echo "  (the command exited with status $? under perf)"
	pids=
	[ -z "$percpu" ] || pids=$(paste -sd, "$W/node.pids" 2>/dev/null || true)
	[ -z "$percpu" ] || [ -n "$pids" ] || pids=0 # no pid recorded: keep none
	perf script -i "$tmp/perf.data" ${pids:+--pid "$pids"} -F comm,tid,ip,sym,dso --no-inline --no-demangle >>"$out" 2>"$tmp/perf.script.err"
	grep -h 'lost' "$tmp/perf.script.err" | sed 's/^/  perf: /' || true
	rm -f "$tmp/perf.data"
	drop_perf_maps
}

# compare NAME STACKCMP-FLAGS...: stackcmp's table and verdicts for NAME's
# probee, perf and perf2 samples, then probee's notes.
compare() {
	name=$1
	shift
	perf2=
	[ ! -s "$tmp/$name.perf2" ] || perf2=$tmp/$name.perf2
	"$tmp/stackcmp" compare -name "$name" "$@" ${TOP:+-top "$TOP"} -probee "$tmp/$name.folded" -perf "$tmp/$name.perf" \
		${perf2:+-perf2 "$perf2"} -verdicts "$tmp/verdicts" || echo "  (stackcmp failed: no figures for $name)"
	probee_notes "$name"
}

# measure NAME CALLGRAPH STACKCMP-FLAGS -- CMD ARGS...: one workload under
# both tools, then the comparison. perf runs twice (the second run's
# .perf2: the overlap of two runs of one tool is the noise ceiling of the
# overlap). With reps=N the three runs repeat N times, alternating, and
# each tool's samples are pooled.
reps=1
measure() {
	name=$1 cg=$2 flags=$3
	shift 4
	selected "$name" || return 0
	: >"$tmp/$name.folded"
	: >"$tmp/$name.perf"
	: >"$tmp/$name.perf2"
	: >"$tmp/$name.probee.err"
	i=0
	while [ $i -lt $reps ]; do
		"$PROBEE" --sample -F 999 -o "$tmp/$name.run.folded" -- "$@" >/dev/null 2>>"$tmp/$name.probee.err" ||
			echo "  (the command exited with status $? under probee)"
		cat "$tmp/$name.run.folded" >>"$tmp/$name.folded"
		drop_perf_maps
		perf_run "-F 999 $cg" "$tmp/$name.perf" -- "$@"
		perf_run "-F 999 $cg" "$tmp/$name.perf2" -- "$@"
		i=$((i + 1))
	done
	[ $reps = 1 ] || echo "  (each tool's samples of $reps runs, pooled)"
	set -f # flags are split into words, not globbed (-from PREFIX*)
	# shellcheck disable=SC2086
	compare "$name" $flags
	set +f
}

# measure_same NAME CALLGRAPH STACKCMP-FLAGS -- CMD ARGS...: one execution
# of CMD under both tools at once (perf records probee, which runs CMD;
# perf's samples of probee itself are left out by comm): the tools' samples
# differ in their instants only, not in the run. Two runs of node differ
# in when V8 compiles the script's loop (perf names that frame
# Builtins_InterpreterEntryTrampoline before, "JS:^ fib.js:1:1" after),
# which takes the share of some chains from 6% to 10%. No second perf
# run: perf over perf is no ceiling of this.
measure_same() {
	name=$1 cg=$2 flags=$3
	shift 4
	selected "$name" || return 0
	: >"$tmp/$name.perf"
	: >"$tmp/$name.perf2"
	cmd_err=$tmp/$name.probee.err
	perf_run "-F 999 $cg" "$tmp/$name.perf" -- "$PROBEE" --sample -F 999 -o "$tmp/$name.folded" -- "$@"
	cmd_err=
	set -f
	# shellcheck disable=SC2086
	compare "$name" $flags
	set +f
}

# measure_event NAME SPEC FROM -- CMD ARGS...: the hits of a uprobe at the
# entry of SPEC's function (one function, one binary) under both tools: the
# same calls with the same stacks every run, so perf against itself agrees
# (~100%) and the overlap measures unwinding alone, where sampled chains of
# a compiler's deep, varied stacks differ by sampling alone. perf gets the
# event through tracefs at the file offset probee lists, and a 1 GiB ring
# buffer (64 KiB of stack per hit). FROM, if set, is passed as -from.
measure_event() {
	name=$1 spec=$2 from=$3
	shift 4
	selected "$name" || return 0
	at=$("$PROBEE" -l -v "$spec" | head -1 | sed -n 's/^uprobe:\([^:]*\):.* file_off=\(0x[0-9a-f]*\).*/\1:\2/p')
	if [ -z "$at" ]; then
		echo "  (no function for $spec: skipped)"
		return 0
	fi
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	ev=$(echo "$name" | tr -c 'A-Za-z0-9_\n' _) # a tracefs event name is an identifier
	if ! echo "p:probee_bench/$ev $at" >>/sys/kernel/tracing/uprobe_events; then
		echo "  (tracefs refused the uprobe $at for perf: skipped)"
		return 0
	fi
	"$PROBEE" --uprobe "$spec" -o "$tmp/$name.folded" -- "$@" >/dev/null 2>"$tmp/$name.probee.err" ||
		echo "  (the command exited with status $? under probee)"
	for run in perf perf2; do
		: >"$tmp/$name.$run"
		perf_run "-m 1024M -e probee_bench:$ev --call-graph dwarf,$PERF_STACK" "$tmp/$name.$run" -- "$@"
	done
	echo "-:probee_bench/$ev" >>/sys/kernel/tracing/uprobe_events
	compare "$name" -event uprobe ${from:+-from "$from"}
}

# measure_once NAME EVENT CALLGRAPH STACKCMP-FLAGS -- CMD ARGS...: every
# hit of the tracepoint EVENT in one execution of CMD, traced by both tools
# at once (perf records probee, which runs CMD; a tracepoint filter leaves
# out probee's own hits): the same events under both, so the overlap
# measures unwinding alone, with no sampling in it. With page faults the
# events happen wherever code first touches a page, mid-function at any
# depth. perf writes its data to $PERF_DATA, in RAM if it can: on disk,
# perf lost a third of a clang++ compile's faults (~1.6 GB of stack
# copies).
measure_once() {
	name=$1 ev=$2 cg=$3 flags=$4
	shift 5
	selected "$name" || return 0
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	: >"$tmp/$name.perf2"
	# shellcheck disable=SC2086
	perf record -q -N -m 1024M -e "$ev" --filter 'comm != "probee"' $cg -o "$PERF_DATA" -- \
		"$PROBEE" --tracepoint "$ev" -o "$tmp/$name.folded" -- "$@" \
		>/dev/null 2>"$tmp/$name.probee.err" || echo "  (the command exited with status $? under both tools)"
	perf script -i "$PERF_DATA" -F comm,tid,ip,sym,dso --no-inline --no-demangle \
		>"$tmp/$name.perf" 2>"$tmp/perf.script.err"
	grep -h 'lost' "$tmp/perf.script.err" | sed 's/^/  perf: /' || true
	rm -f "$PERF_DATA"
	drop_perf_maps
	set -f
	# shellcheck disable=SC2086
	compare "$name" -event once $flags
	set +f
}

echo "probee $PROBEE against $(perf --version), both at 999 Hz"

gen_xz_input() { # ~XZ_MB MB: per chunk 48 KiB of noise in base64, then 220 KB of one repeated line
	yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -n 4000 >"$W/text"
	i=0
	while [ $i -lt $((XZ_MB * 7 / 2)) ]; do
		head -c 49152 /dev/urandom | base64 -w 76
		cat "$W/text"
		i=$((i + 1))
	done >"$W/data.txt"
}
# perf_threads BIN [-a]: perf's samples of BIN's threads but its first
# (their pid is not their tid).
perf_threads() {
	# shellcheck disable=SC2086 # $2 is -a or nothing
	perf record -q -N $2 -F 999 -o "$tmp/perf.data" -- "$1" 200 500 >/dev/null 2>&1
	perf script -i "$tmp/perf.data" --comm shortthreads-no -F pid,tid 2>/dev/null | awk '{split($1, t, "/")} t[1] != t[2] {n++} END {print n + 0}'
	rm -f "$tmp/perf.data"
}

# threads: the samples of threads that each run for less than a period,
# probee's beside perf's with its default timers (per thread: each thread
# starts a period of its own and ends before it) and with -a (per CPU).
threads_row() {
	bin=$ROOT/tests/fixtures/bin/shortthreads-nofp
	if [ ! -x "$bin" ]; then
		echo "threads: skipped: $bin is missing (make fixtures)"
		return 0
	fi
	cpu=$("$bin" 200 500 2>&1 | sed -n 's/.* \([0-9]*\) us of CPU/\1/p')
	echo "threads: $bin 200 500: 200 threads one after another, each 0.5 ms of CPU ($cpu us in all: ~$((cpu * 999 / 1000000)) samples at 999 Hz)"
	"$PROBEE" --sample -F 999 -o "$tmp/threads.folded" -- "$bin" 200 500 >/dev/null 2>&1
	in=$(grep ';short_worker' "$tmp/threads.folded" | awk '{n += $NF} END {print n + 0}')
	thr=$(perf_threads "$bin")
	cpus=$(perf_threads "$bin" -a)
	echo "  samples in the threads: probee $in, perf record $thr (per-thread timers, its default), perf record -a $cpus (per-CPU timers)"
}
gen_xz_input
echo
if selected threads >/dev/null; then threads_row; fi
echo
echo "xz: $(xz --version | head -1), xz -9 -T1 of $(($(wc -c <"$W/data.txt") / 1000000)) MB"
measure xz "--call-graph dwarf,$PERF_STACK" "" -- xz -9 -T1 -c "$W/data.txt"

echo
if command -v clang++ >/dev/null; then
	cat >"$W/re.cpp" <<'EOF'
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

static std::map<std::string, int> count_words(const std::string &text) {
	std::map<std::string, int> counts;
	std::regex word("[A-Za-z]+");
	for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it)
		counts[it->str()]++;
	return counts;
}

int main(int argc, char **argv) {
	std::vector<std::string> args(argv, argv + argc);
	std::regex date(R"((\d{4})-(\d{2})-(\d{2}))");
	std::smatch m;
	for (const auto &a : args)
		if (std::regex_search(a, m, date))
			std::cout << m[1] << "/" << m[2] << "/" << m[3] << "\n";
	std::string text = std::regex_replace(args[0], std::regex("/+"), " ");
	for (const auto &kv : count_words(text))
		std::cout << kv.first << " " << kv.second << "\n";
	return 0;
}
EOF
	echo "clang++: $(clang++ --version | head -1), clang++ -O2 -c of a file with <regex>"
	reps=$COMPILE_RUNS
	measure clang++ "--call-graph dwarf,$PERF_STACK" "" -- clang++ -O2 -c "$W/re.cpp" -o "$W/re.o"
	reps=1
	echo
	echo "clang++-same: the same compile, one execution under both tools at once"
	measure_same clang++-same "--call-graph dwarf,$PERF_STACK" "" -- clang++ -O2 -c "$W/re.cpp" -o "$W/re.o"
	echo
	echo "clang++-uprobe: the same compile, stacks of every call of clang::Sema::ActOnCallExpr (libclang-cpp)"
	measure_event clang++-uprobe "libclang-cpp:demangle:clang::Sema::ActOnCallExpr" "" -- clang++ -O2 -c "$W/re.cpp" -o "$W/re.o"
	echo
	echo "clang++-faults: the same compile, every page fault, one execution under both tools at once"
	measure_once clang++-faults exceptions:page_fault_user "--call-graph dwarf,$PERF_STACK" "" -- clang++ -O2 -c "$W/re.cpp" -o "$W/re.o"
else
	echo "clang++: skipped: clang++ is missing (apt-get install clang)"
fi

echo
RUSTC=$(rustup which rustc 2>/dev/null || command -v rustc || true)
if [ -n "$RUSTC" ]; then
	cat >"$W/m.rs" <<'EOF'
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
struct Item { name: String, weight: u64, tags: Vec<String> }

trait Score { fn score(&self) -> u64; }
impl Score for Item { fn score(&self) -> u64 { self.weight * self.tags.len() as u64 } }

fn fib(n: u64) -> u64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }

macro_rules! stage {
    ($($name:ident),*) => { $(
        fn $name<T: Score + Clone + std::fmt::Debug>(items: &[T]) -> (u64, String) {
            let mut s = String::new();
            let mut by: BTreeMap<u64, Vec<T>> = BTreeMap::new();
            for it in items.iter().filter(|i| i.score() % 3 != 1) { by.entry(it.score() % 17).or_default().push(it.clone()); }
            for (k, v) in &by { let _ = write!(s, "{}:{:?};", k, v.iter().map(|i| i.score()).max()); }
            (by.values().flatten().map(|i| i.score()).sum(), s)
        }
    )* };
}
stage!(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15);

fn main() {
    let mut by_name: HashMap<String, Vec<Item>> = HashMap::new();
    for i in 0..1000u64 {
        let it = Item { name: format!("item{}", i % 37), weight: fib(i % 20), tags: vec![format!("t{}", i % 5); (i % 4) as usize] };
        by_name.entry(it.name.clone()).or_default().push(it);
    }
    let all: Vec<Item> = by_name.values().flatten().cloned().collect();
    let stages = [s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15];
    let total: u64 = stages.iter().map(|f| f(&all).0).sum();
    let mut names: Vec<_> = by_name.iter().map(|(k, v)| (k.clone(), v.iter().map(|i| i.weight).sum::<u64>())).collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (n, w) in names.iter().take(5) { println!("{n} {w}"); }
    println!("{total}");
}
EOF
	echo "rustc: $("$RUSTC" --version) ($RUSTC), rustc -O of a small program"
	# rustc compiles on a thread whose run_compiler closure has a 540 KiB
	# stack frame (gdb: sp 0x7fffe476f620 in it, 0x7fffe47f33d0 in its
	# caller): perf's stack copy (64 KiB at most) never reaches past it, so
	# caller chains are compared from that closure on.
	from="rustc_interface::interface::run_compiler::<*"
	reps=$COMPILE_RUNS
	measure rustc "--call-graph dwarf,$PERF_STACK" "-from $from" -- "$RUSTC" -O "$W/m.rs" -o "$W/m"
	reps=1
	echo
	echo "rustc-uprobe: the same compile, stacks of every call of SelectionContext::candidate_from_obligation"
	DRIVER=$(ls "$(dirname "$RUSTC")"/../lib/librustc_driver-*.so 2>/dev/null | head -1)
	measure_event rustc-uprobe "$DRIVER:demangle:rustc_trait_selection::traits::select::SelectionContext::candidate_from_obligation" \
		"$from" -- "$RUSTC" -O "$W/m.rs" -o "$W/m"
	echo
	echo "rustc-faults: the same compile, every page fault, one execution under both tools at once"
	measure_once rustc-faults exceptions:page_fault_user "--call-graph dwarf,$PERF_STACK" "-from $from" -- "$RUSTC" -O "$W/m.rs" -o "$W/m"
else
	echo "rustc: skipped: rustc is missing (https://rustup.rs)"
fi

echo
if command -v node >/dev/null; then
	cat >"$W/fib.js" <<'EOF'
require('fs').appendFileSync(process.argv[2], process.pid + '\n');
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const end = Date.now() + 1000 * Number(process.argv[3]);
let s = 0;
while (Date.now() < end) s += fib(25);
console.log(s > 0 ? 'ok' : 'none');
EOF
	echo "node: $(node --version) ($(command -v node)), node --perf-basic-prof, recursive fib for ${SECS}s"
	# perf -g walks frame pointers, which libc lacks: its chains start at
	# __libc_start_call_main, so both sides' chains are compared from there.
	# Its named-JS share is one minus the share of start-up, exit and
	# V8's helper threads (~2%), which varies from run to run by more than
	# the tools differ: NODE_RUNS runs per tool, pooled. perf samples every
	# CPU, as probee does: with its default timers per thread it misses the
	# last part period of each of node's ~10 threads, 3-4 samples a run,
	# all without JS, and its named-JS share was 0.1-0.3 points higher
	# than with per-CPU timers (3 runs each: 98.1% against 97.8%).
	reps=$NODE_RUNS percpu=1
	measure node -g "-js -from __libc_start_call_main" -- node --perf-basic-prof "$W/fib.js" "$W/node.pids" "$SECS"
	reps=1
	echo
	echo "node-same: node as above, one execution under both tools at once"
	measure_same node-same -g "-js -from __libc_start_call_main" -- node --perf-basic-prof "$W/fib.js" "$W/node.pids" "$SECS"
	percpu=
	echo
	echo "node-events: the same fib, every 8192nd fib(0) reading process.ppid (a getppid call), one execution under both tools at once"
	sed 's|return n < 2 ? n : |if (n === 0 \&\& (++k \& 8191) === 0) process.ppid; return n < 2 ? n : |; 1i let k = 0;' "$W/fib.js" >"$W/fibsys.js"
	measure_once node-events syscalls:sys_enter_getppid -g "-js -fp-leaf -from __libc_start_call_main" -- \
		node --perf-basic-prof "$W/fibsys.js" "$W/node.pids" "$SECS"
else
	echo "node: skipped: node is missing (apt-get install nodejs)"
fi

echo
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$PY" ]; then
	cat >"$W/p.py" <<'EOF'
import sys, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def words(n):
    d = {}
    for i in range(n):
        k = "k%d" % (i % 997)
        d[k] = d.get(k, 0) + i
    return sorted(d.items(), key=lambda kv: kv[1])[-1]

end = time.time() + float(sys.argv[1])
while time.time() < end:
    fib(20)
    words(20000)
EOF
	case $PY in /root/.pyenv/* | */.pyenv/*) where="pyenv's" ;; *) where="" ;; esac
	echo "python3: $("$PY" --version) ($PY${where:+, $where}), recursion and dict work for ${SECS}s"
	measure python3 "--call-graph dwarf,$PERF_STACK" "" -- "$PY" "$W/p.py" "$SECS"
else
	echo "python3: skipped: python3 is missing (apt-get install python3)"
fi

echo
if command -v go >/dev/null; then
	cp -r "$ROOT/tests/fixtures/src/gofx" "$W/gofx"
	echo "go: $(go version | cut -d' ' -f3), go build -a of tests/fixtures/src/gofx (its own module, no cgo)"
	(
		cd "$W/gofx"
		export GOCACHE="$W/gocache" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0
		measure go -g "-from runtime.morestack.abi0" -- go build -a -o "$W/gofx.out" .
	)
else
	echo "go: skipped: go is missing"
fi

echo
echo "targets:"
"$tmp/stackcmp" summary "$tmp/verdicts"
