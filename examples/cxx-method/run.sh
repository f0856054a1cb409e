#!/bin/sh
# A C++ method by its demangled name: probe geo::Circle::area (a virtual
# method, called through the base class and directly) and see its callers.
. "$(dirname "$0")/../lib.sh"

cxx=${CXX:-c++}
$cxx -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$build/shapes" "$here/shapes.cpp"

# What the demangled pattern resolves to (raw symbol, address, source line):
probee --list-probes "$build/shapes:geo::Circle::area" >&2

probee --uprobe "$build/shapes:geo::Circle::area" -o "$build/area.folded" -- "$build/shapes" 1000

echo "# stacks (probe;comm;frames root..leaf count):"
cat "$build/area.folded"
