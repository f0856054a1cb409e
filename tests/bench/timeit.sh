#!/bin/sh
# timeit.sh OUTFILE CMD ARGS...: runs CMD and writes its wall time in ns to OUTFILE.
out=$1; shift
s=$(date +%s%N)
"$@"
e=$(date +%s%N)
echo $((e - s)) > "$out"
