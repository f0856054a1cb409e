#!/bin/sh
# A hot source line: probe hot.c's line marked HOT (inside an inline
# function, so it has one address per inlined copy) and show where it runs,
# with inline frames and --lines.
. "$(dirname "$0")/../lib.sh"

cc=${CC:-cc}
$cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$build/hot" "$here/hot.c"
line=$(grep -n '/\* HOT \*/' "$here/hot.c" | cut -d: -f1)

# One target per address of the line:
probee --list-probes "$build/hot:hot.c:$line" >&2

probee --uprobe "$build/hot:hot.c:$line" --lines -o "$build/line.folded" -- "$build/hot" 200

echo "# stacks (probe;comm;frames root..leaf count), frames with :file:line:"
cat "$build/line.folded"
