#!/bin/sh
# Which library allocates? Probe libc's malloc while the program runs and
# count the allocations by the function (and so the library) that called it.
. "$(dirname "$0")/../lib.sh"

cc=${CC:-cc}
flags="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
$cc $flags -fPIC -shared -o "$build/libparse.so" "$here/libparse.c"
$cc $flags -fPIC -shared -o "$build/librender.so" "$here/librender.c"
$cc $flags -o "$build/app" "$here/app.c" -L"$build" -lparse -lrender -Wl,-rpath,'$ORIGIN'

probee --uprobe libc:malloc -o "$build/malloc.folded" -o "$build/malloc.svg" -- "$build/app" 1000

echo "# stacks (probe;comm;frames root..leaf count):"
cat "$build/malloc.folded"
echo "# malloc calls by caller:"
awk '{ n = split($1, f, ";"); c[f[n-1]] += $2 } END { for (k in c) print c[k], k }' \
	"$build/malloc.folded" | sort -rn
