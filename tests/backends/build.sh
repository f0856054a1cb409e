#!/bin/sh
# Builds the profiling backends the push e2e tests run against, from Go modules
# (see /work/shared/NOTES.md "Profiling backends"): Pyroscope v1.21.1 and
# Parca v0.28.0. Idempotent: a backend whose binary exists is skipped.
#
# Usage: tests/backends/build.sh [--background] [pyroscope] [parca]   (default: both)
# Binaries go to $PROBEE_BACKENDS_DIR (default ~/.cache/probee/backends, outside
# the repository so every worktree shares one build): bin/pyroscope, bin/parca.
# A build writes bin/NAME.log; bin/NAME is moved into place only when complete,
# so a waiting test never sees a half-written binary. While a build runs,
# bin/building.pid holds its pid: the push e2e tests wait for it
# (tests/e2e/push_backends_test.go), and a second build does not start.
# --background returns at once, leaving the build running under nice
# (make test under PROBEE_REQUIRE_KERNEL=1 starts it first thing).
# The servers are only run by the tests, never debugged or timed: they are
# compiled without optimization or inlining (-gcflags=all=-N -l: Parca alone,
# empty build cache, 346 s against 502 s optimized; the push tests pass
# against both) and linked without DWARF and symbol tables (-s -w), which
# shortens the link.
set -eu

DIR=${PROBEE_BACKENDS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/probee/backends}
GO=${GO:-go}
PYROSCOPE_VERSION=v1.21.1
PYROSCOPE_API_VERSION=v1.4.0
PARCA_VERSION=v0.28.0
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local

mkdir -p "$DIR/bin" "$DIR/src"
PIDFILE=$DIR/bin/building.pid

missing() {
	for name in ${*:-pyroscope parca}; do [ -x "$DIR/bin/$name" ] || return 0; done
	return 1
}

if [ "${1:-}" = --background ]; then
	shift
	missing "$@" || exit 0
	nohup nice -n 10 "$0" "$@" > "$DIR/bin/build.out" 2>&1 &
	echo "building the push backends in the background (pid $!, log $DIR/bin/build.out)"
	exit 0
fi
# running: whether the pid in PIDFILE is a live process.
running() {
	pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

if running; then
	missing "$@" || exit 0
	echo "a backend build is already running (pid $pid); waiting for it" >&2
	while running; do sleep 2; done
	missing "$@" || exit 0
fi
echo $$ > "$PIDFILE"
trap 'rm -f "$PIDFILE"' EXIT

# wrapper DIR MODULE: a fresh wrapper module to build a backend's main package.
wrapper() {
	rm -rf "$1" && mkdir -p "$1"
	printf 'module %s\n\ngo 1.24\n' "$2" > "$1/go.mod"
}

build_pyroscope() {
	w="$DIR/src/pyroscope"
	wrapper "$w" probee.local/backends/pyroscope || return
	cat >> "$w/go.mod" <<MOD

require (
	github.com/grafana/pyroscope $PYROSCOPE_VERSION
	github.com/grafana/pyroscope/api $PYROSCOPE_API_VERSION
)

// Pyroscope's own replace lines (its go.mod).
replace (
	github.com/hashicorp/memberlist => github.com/grafana/memberlist v0.3.1-0.20251126142931-6f9f62ab6f86
	gopkg.in/yaml.v3 => github.com/colega/go-yaml-yaml v0.0.0-20220720105220-255a8d16d094
)
MOD
	# Seed go.sum with Pyroscope's own (otherwise ~29 checksum lookups fail).
	# (set -e does not apply inside "if ! build_NAME": every step says || return.)
	src=$(cd "$w" && "$GO" mod download -json "github.com/grafana/pyroscope@$PYROSCOPE_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || return
	[ -n "$src" ] || { echo "go mod download found no module directory" >&2; return 1; }
	cp "$src/go.sum" "$w/go.sum" && chmod u+w "$w/go.sum" || return
	(cd "$w" && "$GO" build -trimpath -gcflags="all=-N -l" -ldflags="-s -w" -o "$DIR/bin/pyroscope.tmp" github.com/grafana/pyroscope/cmd/pyroscope)
}

build_parca() {
	w="$DIR/src/parca"
	wrapper "$w" probee.local/backends/parca || return
	(cd "$w" && "$GO" get "github.com/parca-dev/parca/cmd/parca@$PARCA_VERSION" &&
		"$GO" build -trimpath -gcflags="all=-N -l" -ldflags="-s -w" -o "$DIR/bin/parca.tmp" github.com/parca-dev/parca/cmd/parca)
}

# build NAME: one backend, logged to bin/NAME.log, moved into place when
# complete. Both build at once: one's module downloads and link overlap the
# other's compiling (cold, one after the other took 16 + 9 minutes).
build() {
	start=$(date +%s)
	echo "$1: building into $DIR/bin (log $DIR/bin/$1.log)"
	if ! "build_$1" > "$DIR/bin/$1.log" 2>&1; then
		tail -20 "$DIR/bin/$1.log" >&2; echo "$1: build failed, see $DIR/bin/$1.log" >&2; return 1
	fi
	mv "$DIR/bin/$1.tmp" "$DIR/bin/$1"
	echo "$1: built in $(( $(date +%s) - start ))s"
}

pids=
for name in ${*:-pyroscope parca}; do
	case $name in pyroscope|parca) ;; *) echo "unknown backend $name (pyroscope, parca)" >&2; exit 2;; esac
	if [ -x "$DIR/bin/$name" ]; then echo "$name: $DIR/bin/$name exists, skipped"; continue; fi
	build "$name" &
	pids="$pids $!"
done
status=0
for pid in $pids; do wait "$pid" || status=1; done
exit $status
