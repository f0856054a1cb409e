#!/bin/sh
# How fast new mappings (dlopen) get their unwind tables (issue 6: within
# 100 ms): dlmain-nofp dlopens libdlplugin.so, waits DELAY ms, then calls
# into it N times; probee --unwind dwarf counts how many of those stacks
# are complete (reach main through the plugin). Prints the share per delay;
# the target is 100% at 100 ms. With the ld.so gate (dlopen returns only once
# the tables are loaded) it is 100% at 0 ms.
set -e
cd "$(dirname "$0")/../.."
N=${N:-300}
BIN=$PWD/tests/fixtures/bin
[ -x "$BIN/dlmain-nofp" ] || { echo "missing $BIN/dlmain-nofp: run make fixtures" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
out=$(mktemp --suffix=.folded)
trap 'rm -f "$out"' EXIT
echo "dlopen pickup: $N calls into the plugin after DELAY ms (target: 100% complete at 100 ms)"
for delay in ${DELAYS:-0 10 25 50 100 200}; do
	bin/probee -q --unwind dwarf --uprobe "$BIN/libdlplugin.so:plugin_leaf" -o "$out" \
		-- "$BIN/dlmain-nofp" "$N" "$delay" >/dev/null
	awk -v d="$delay" '{ n = $NF; all += n; if ($0 ~ /;main;call_plugin;plugin_entry;plugin_leaf /) ok += n }
		END { printf "  delay %4d ms: %5.1f%% complete (%d of %d)\n", d, all ? 100 * ok / all : 0, ok, all }' "$out"
done
