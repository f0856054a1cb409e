#!/bin/sh
# CPU sampling: where does a busy program spend its time? Sample its stacks
# at 499 Hz for the program's lifetime and write a flamegraph and pprof.
. "$(dirname "$0")/../lib.sh"

cc=${CC:-cc}
$cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$build/busy" "$here/busy.c"

probee --sample -F 499 -o "$build/cpu.folded" -o "$build/cpu.svg" -o "$build/cpu.pb.gz" -- "$build/busy" 2

echo "# sampled stacks (sample;comm;frames root..leaf count):"
cat "$build/cpu.folded"
echo "# samples by function (leaf):"
awk '{ n = split($1, f, ";"); c[f[n]] += $2 } END { for (k in c) print c[k], k }' "$build/cpu.folded" | sort -rn | head -5
echo "# open $build/cpu.svg in a browser, or: go tool pprof -top $build/cpu.pb.gz"
