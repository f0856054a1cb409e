#!/bin/sh
# Installs the Debian packages probee's build, fixtures and tests need.
# Does nothing when they are present; needs root (apt-get) otherwise.
set -e
need=""
have() { command -v "$1" >/dev/null 2>&1; }
have clang    || need="$need clang"
have llc      || need="$need llvm"
have bpftool  || need="$need bpftool"
have readelf  || need="$need binutils"
have gcc      || need="$need gcc"
have g++      || need="$need g++"
have gdb      || need="$need gdb"
have chromium || need="$need chromium"
[ -e /usr/include/bpf/bpf_helpers.h ] || need="$need libbpf-dev"
[ -e /usr/include/x86_64-linux-gnu/asm/types.h ] || need="$need linux-libc-dev"
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "missing packages:$need - run as root or: apt-get install$need" >&2
	exit 1
fi
echo "installing:$need" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $need >/dev/null
