#!/bin/sh
# A binary without frame pointers: frame-pointer walking loses the callers
# (rbp is a general register there); --unwind dwarf walks .eh_frame instead
# and recovers main -> parse -> tokenize -> classify.
. "$(dirname "$0")/../lib.sh"

rustc=${RUSTC:-$(command -v rustc || echo "$HOME/.cargo/bin/rustc")}
[ -x "$rustc" ] || skip "rustc not found: install Rust (rustup) or set RUSTC"
"$rustc" -C opt-level=2 -g -C force-frame-pointers=no -o "$build/nofp" "$here/nofp.rs"

probee --uprobe "$build/nofp:nofp::classify" --unwind fp -o "$build/fp.folded" -- "$build/nofp" 1000 >/dev/null
probee --uprobe "$build/nofp:nofp::classify" --unwind dwarf -o "$build/dwarf.folded" -- "$build/nofp" 1000 >/dev/null

echo "# stacks with --unwind fp (callers lost or wrong):"
cat "$build/fp.folded"
echo "# stacks with --unwind dwarf (probe;comm;frames root..leaf count):"
cat "$build/dwarf.folded"
