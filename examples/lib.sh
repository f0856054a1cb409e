# Sourced by every examples/*/run.sh: strict mode, paths, the probee binary
# (built with `make build` when missing; PROBEE overrides it) and the skip
# convention (exit 77 with a reason, as automake's test drivers do).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build="$here/build"
mkdir -p "$build"

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

PROBEE=${PROBEE:-$root/bin/probee}
if [ ! -x "$PROBEE" ]; then
	echo "building probee (make build)" >&2
	make -C "$root" build >&2
fi
[ "$(id -u)" = 0 ] || skip "probee needs root (CAP_BPF, CAP_PERFMON): run as root"

# probee runs the probee binary with the example's arguments, echoing them.
probee() {
	echo "+ probee $*" >&2
	"$PROBEE" "$@"
}
