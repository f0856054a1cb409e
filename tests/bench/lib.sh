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

# shell_loop SECONDS: runs ls, git --version and pyenv's or Debian's
# python3 -c pass over and over for SECONDS: many short processes, each
# with its own stacks (the system-wide benchmarks' load).
shell_loop() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		ls / >/dev/null; git --version >/dev/null; python3 -c pass
	done
}
