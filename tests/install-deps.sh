#!/bin/sh
# Installs the Debian packages probee's build, fixtures and tests need: the
# one place the project installs anything (tests and tools never do).
# Does nothing when they are present; needs root (apt-get) otherwise.
#
#   tests/install-deps.sh          build, fixtures, tests and make vmtest
#   tests/install-deps.sh bench    also the peers make bench compares with
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
have unshare  || need="$need util-linux"
have node     || need="$need nodejs"
[ -e /usr/include/bpf/bpf_helpers.h ] || need="$need libbpf-dev"
[ -e /usr/include/x86_64-linux-gnu/asm/types.h ] || need="$need linux-libc-dev"
# USDT: <sys/sdt.h> for the usdt fixture; Debian's python3.11 (9 USDT probes)
# for the e2e test (pyenv's python3 on PATH has none: the test runs
# /usr/bin/python3.11).
[ -e /usr/include/x86_64-linux-gnu/sys/sdt.h ] || [ -e /usr/include/sys/sdt.h ] || need="$need systemtap-sdt-dev"
[ -x /usr/bin/python3.11 ] || need="$need python3.11"
# make vmtest boots Debian's kernel under qemu (as root, or where qemu is);
# the e2e tests run real containers with podman (as root: crun, overlay
# storage, no registry needed).
if [ "$(id -u)" = 0 ]; then
	have qemu-system-x86_64 || need="$need qemu-system-x86"
	have podman             || need="$need podman"
fi
if [ "$1" = bench ]; then
	have bpftrace || need="$need bpftrace"
	have perf     || need="$need linux-perf"
	[ -x /usr/bin/time ] || need="$need time" # peak memory (12-new-stacks.sh)
	# offcputime-bpfcc and its libbpf build, offcputime (77-offcpu.sh).
	# BCC compiles against kernel headers at run time; the running kernel
	# may have none, so Debian's own (linux-headers-amd64: 6.1 on Debian
	# 12), which the script merges into one directory for BCC_KERNEL_SOURCE.
	have offcputime-bpfcc || need="$need bpfcc-tools"
	[ -x /usr/sbin/offcputime ] || need="$need libbpf-tools"
	ls -d /usr/src/linux-headers-*-common >/dev/null 2>&1 || need="$need linux-headers-amd64"
fi
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
