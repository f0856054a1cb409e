#!/bin/sh
# Runs every fuzz target in the module for $1 each (default 30s):
# `make fuzz`, or `FUZZTIME=10m make fuzz` for the long runs. New crashers
# land in the package's testdata/fuzz/ and must be committed as seeds.
set -e
cd "$(dirname "$0")/.."
t=${1:-30s}
for pkg in $(go list ./...); do
	for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		echo "== $pkg $f ($t)"
		go test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$t" -fuzzminimizetime 10s
	done
done
