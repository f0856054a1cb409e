// Command vmtest is `make vmtest`: it boots Debian's stock kernel under
// qemu-system-x86 (TCG: KVM is not usable on the build machines) with an
// initramfs holding the static probee binary, a static `go test -c` build of
// tests/e2e, the fixture binaries those tests need and a tiny init
// (tests/vm/init), runs the kernel-probe e2e tests plus the uprobe subset
// inside, and fails when any test fails. It exists because the development
// and CI hosts run a kernel without CONFIG_KPROBES.
//
// Steps:
//   - qemu-system-x86 is installed (--no-install-recommends) when missing.
//   - The kernel package is resolved at run time from the metapackage
//     linux-image-cloud-amd64 (`apt-cache depends`; ABI numbers change),
//     fetched with `apt-get download` (never installed), and only its
//     ./boot/vmlinuz-* is extracted (dpkg-deb --fsys-tarfile | tar -xO) into
//     tests/vm/cache/ (git-ignored), so later runs are offline.
//   - The initramfs is a newc cpio written here (cpio.go: no cpio or busybox
//     needed) with /dev/console, so that /init has a console.
//   - Fixture binaries are dynamically linked: each goes in at its host path
//     together with its ELF interpreter and DT_NEEDED libraries (resolved
//     through RUNPATH/$ORIGIN and the default library directories),
//     recreating symlinks on the way (merged /usr). /bin/sh, seq and cat go
//     in the same way. Uprobe targets are not stripped.
//   - The guest runs with PROBEE_IN_VM=1 (tests know they run in the VM,
//     on a kernel without uprobe_multi and kprobe_multi, where per-target
//     links are used), PROBEE_REQUIRE_KERNEL=1 and PROBEE_BIN (the e2e tests
//     use that binary instead of building one: there is no Go toolchain in
//     the VM).
//   - qemu runs with -accel tcg,thread=single (multi-threaded TCG hung in
//     about one boot in five), -smp 2 -m 1G, the serial console on stdout.
//     The init prints PROBEE-VMTEST-EXIT=<code>; its absence (a hang, a
//     panic) or a non-zero code fails the run.
//
// Flags: -run selects other e2e tests, -count repeats them (flaky-test
// hunts), -timeout bounds boot plus tests,
// -cache moves the kernel cache.
package main
