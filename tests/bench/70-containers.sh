#!/bin/sh
# Processes under another root (issue 21): the two scenarios of the issue,
# on a root directory holding a no-frame-pointer fixture, its libc and
# ld.so, run with `chroot DIR /bin/app`.
#
# 1. `probee --sample -F 499 -p PID -d 1s` on the chrooted spin-nofp:
#    samples, the share reaching _start, the share [truncated].
# 2. System-wide `probee --uprobe DIR/bin/app:leaf -d 6s` while the
#    chrooted chain-nofp makes N calls: hits, the share [truncated], and
#    whether the leaf is symbolized (leaf, not app+0x...).
# PROBEE_OLD (a probee binary from before this issue) prints the same
# beside it.
set -e
cd "$(dirname "$0")/../.."
. tests/bench/lib.sh
FIX=$PWD/tests/fixtures/bin
bench_setup "$FIX/spin-nofp"
N=${N:-3000000}

# mkroot DIR BIN: DIR/bin/app with the libraries and ld.so it needs.
mkroot() {
	mkdir -p "$1/bin"
	cp "$2" "$1/bin/app"
	for lib in $(ldd "$2" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib"
	done
}

# share FOLDED STDERR NAME: hits, share reaching _start, [truncated], leaf named.
share() {
	awk -v name="$3" '
		{ n = $NF; t += n; if ($0 ~ /;_start;/) s += n; if ($0 ~ /\[truncated\]/) tr += n
		  if ($0 ~ /;leaf [0-9]+$|;spin_leaf [0-9]+$/) leaf += n }
		END { if (t == 0) t = 1
		      printf "  %-8s %8d  _start %6.2f%%  [truncated] %6.2f%%  leaf named %6.2f%%\n", name, t, 100*s/t, 100*tr/t, 100*leaf/t }' "$1"
	grep -h 'unwind tables:' "$2" | sed 's/^/           /' || true
}

sample_pid() { # NAME PROBEE
	chroot "$tmp/spin" /bin/app 3 & app=$!
	sleep 0.5
	pid=$(pgrep -P $app || echo $app)
	"$2" --sample -F 499 -p "$pid" -d 1s -o "$tmp/s.folded" 2>"$tmp/s.err" || true
	wait $app
	share "$tmp/s.folded" "$tmp/s.err" "$1"
}

uprobe_sw() { # NAME PROBEE
	"$2" --uprobe "$tmp/chain/bin/app:leaf" -d 6s -o "$tmp/u.folded" 2>"$tmp/u.err" & p=$!
	sleep 1.5
	chroot "$tmp/chain" /bin/app "$N"
	wait $p || true
	share "$tmp/u.folded" "$tmp/u.err" "$1"
}

mkroot "$tmp/spin" "$FIX/spin-nofp"
mkroot "$tmp/chain" "$FIX/chain-nofp"
echo "1. --sample -F 499 -p PID -d 1s, chroot DIR /bin/app (spin-nofp)"
sample_pid probee "$tmp/probee"
[ -n "$PROBEE_OLD" ] && sample_pid old "$PROBEE_OLD"
echo "2. system-wide --uprobe DIR/bin/app:leaf -d 6s, chroot DIR /bin/app $N (chain-nofp)"
uprobe_sw probee "$tmp/probee"
[ -n "$PROBEE_OLD" ] && uprobe_sw old "$PROBEE_OLD"
