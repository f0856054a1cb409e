# Sourced by benchmark scripts (from the repository root).
# bench_setup BIN: exits 0 with a "skipped" line unless running as root
# with fixture BIN built; otherwise makes $tmp (removed on exit) and builds
# probee into $tmp/probee.
bench_setup() {
	if [ "$(id -u)" != 0 ] || [ ! -x "$1" ]; then
		echo "skipped: needs root and $1 (make fixtures)"
		exit 0
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	go build -o "$tmp/probee" ./cmd/probee
}
