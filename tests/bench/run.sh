#!/bin/sh
# Runs every benchmark script in this directory in order (NN-name.sh) and the
# Go benchmarks; each prints its own figures. Run through `make bench`.
set -e
cd "$(dirname "$0")"
for s in [0-9][0-9]-*.sh; do
	[ -x "$s" ] || continue
	echo "== $s"
	./"$s"
done
