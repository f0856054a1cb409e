// Command vmtest is `make vmtest`: it boots each kernel of the matrix
// (Debian 11's 5.10, 12's 6.1 and 13's 6.12 cloud kernels) under
// qemu-system-x86 (TCG: KVM is not usable on the build machines) with an
// initramfs holding the static probee binary, a static `go test -c` build of
// tests/e2e, the fixture binaries those tests need and a tiny init
// (tests/vm/init), runs the kernel-probe e2e tests plus the uprobe, DWARF,
// sampling and latency subset inside, and fails when any test fails on any
// kernel. It exists because the development and CI hosts run a kernel
// without CONFIG_KPROBES, and because probee's fallbacks for older kernels
// (bpf/compat.h) run only there.
//
// Steps:
//   - qemu-system-x86 is installed (--no-install-recommends) when missing.
//   - Each kernel package is resolved at run time from its release's
//     metapackage linux-image-cloud-amd64 (ABI numbers change) through a
//     private apt configuration (apt.go: its own sources list, lists and
//     cache under tests/vm/cache/apt/SUITE, the machine's Debian mirror),
//     fetched with `apt-get download` (never installed), and only its
//     ./boot/vmlinuz-* is extracted (dpkg-deb --fsys-tarfile | tar -xO) into
//     tests/vm/cache/ (git-ignored), so later runs are offline.
//   - The initramfs is built once for all kernels: a newc cpio written here
//     (cpio.go: no cpio or busybox needed) with /dev/console, so that /init
//     has a console.
//   - Fixture binaries are dynamically linked: each goes in at its host path
//     together with its ELF interpreter and DT_NEEDED libraries (resolved
//     through RUNPATH/$ORIGIN and the default library directories),
//     recreating symlinks on the way (merged /usr). /bin/sh, seq and cat go
//     in the same way. Uprobe targets are not stripped.
//   - The guest runs with PROBEE_IN_VM=1, PROBEE_REQUIRE_KERNEL=1 and
//     PROBEE_BIN (the e2e tests use that binary instead of building one:
//     there is no Go toolchain in the VM).
//   - qemu runs with -accel tcg,thread=single (multi-threaded TCG hung in
//     about one boot in five), -smp 2 -m 1G, the serial console on stdout,
//     every line behind the kernel's version ("[5.10] --- PASS: TestX").
//     The init prints PROBEE-VMTEST-EXIT=<code>; its absence (a hang, a
//     panic) or a non-zero code fails that kernel. A summary lists every
//     kernel's PASS, SKIP and FAIL lines.
//
// Flags: -kernels (or VMTEST_KERNELS) selects kernels, e.g. 5.10,6.12;
// -run selects other e2e tests, -count repeats them (flaky-test hunts),
// -timeout bounds boot plus tests per kernel, -cache moves the kernel cache,
// -parallel sets how many VMs run at once (2: each qemu emulates on one
// host thread; the console lines of both interleave, each behind its
// kernel's version).
package main
