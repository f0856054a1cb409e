#!/bin/sh
# Unwind tables (unwind/): for each binary, CFI rows, entries after merging,
# distinct rules, encoded bytes, bytes per original row and warm build time.
# Targets for libc.so.6: build < 10 ms warm, <= 5 bytes per row.
set -e
cd "$(dirname "$0")/../.."
out=$(go test -run '^$' -bench 'BenchmarkBuild|BenchmarkLookup' -benchtime "${UNWIND_BENCHTIME:-30x}" ./unwind/)
echo "== 30-unwind: unwind table build (warm) and size =="
echo "$out" | awk '
/^BenchmarkBuild\// {
	name = $1; sub(/^BenchmarkBuild\//, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
	printf "%-22s rows=%-7d entries=%-7d rules=%-4d bytes=%-8d bytes/row=%.2f build=%.2fms wall %.2fms cpu\n", \
		name, v["rows"], v["entries"], v["rules"], v["bytes"], v["bytes/row"], v["ns/op"] / 1e6, v["cpu-ms/op"]
}
/^BenchmarkLookup/ { printf "lookup (libc, Go twin of the BPF search): %s ns\n", $3 }
/^(FAIL|panic)/ { print; bad = 1 }
END { exit bad }'
