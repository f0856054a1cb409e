#!/bin/sh
# Attach + detach cost of every libc function (issue 4: well under 2 s
# together): probee --uprobe 'libc:*' on a sleeping process with -d 0.2s,
# timed end to end, ROUNDS times; prints probes attached, attach time (from
# probee's own line) and total wall time minus the 0.2 s of tracing.
set -e
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
sleep 60 & SP=$!
trap 'kill $SP 2>/dev/null' EXIT
for i in $(seq "$ROUNDS"); do
	s=$(date +%s%N)
	line=$(bin/probee --uprobe 'libc:*' -p "$SP" -d 200ms -o /tmp/probee-bench-libc.folded 2>&1 | grep '^probee: attached')
	e=$(date +%s%N)
	echo "$line" | awk -v ms=$(( (e - s) / 1000000 - 200 )) \
		'{printf "libc:* round: %s uprobes attached, attach %s, attach+detach+startup %d ms (target < 2000)\n", $3, $(NF-1) " " $NF, ms}'
done
rm -f /tmp/probee-bench-libc.folded
