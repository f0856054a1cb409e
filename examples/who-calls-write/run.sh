#!/bin/sh
# Who calls write? A Go service writes in a loop; probe the Go runtime's
# write path (syscall.write, which every os.File write goes through) and
# see which code paths end there.
. "$(dirname "$0")/../lib.sh"

command -v go >/dev/null || skip "go toolchain not found: install Go"
(cd "$here" && GOWORK=off CGO_ENABLED=0 go build -o "$build/svc" .)

probee --uprobe "$build/svc:syscall.write" -o "$build/write.folded" -o "$build/write.svg" \
	-- "$build/svc" 2000 "$build/access.log"

echo "# stacks (probe;comm;frames root..leaf count):"
cat "$build/write.folded"
