// Command init is PID 1 of make vmtest's VM: it mounts the kernel
// filesystems probee needs, runs the e2e test binary named in
// /etc/probee-vmtest.json with its own arguments (the kernel command line
// after "--"), prints PROBEE-VMTEST-EXIT=<code> and powers off.
//
// The test binary runs as a child, not as PID 1, so cilium/ebpf's rlimit
// probe (run at package init) sees a mounted /proc and no re-exec is needed.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

type config struct {
	Dir  string
	Test string
	Env  []string
}

// mounts are the kernel filesystems the tests need. /tmp stays on the
// (writable) initramfs root: a tmpfs there would hide a repository checked
// out under /tmp.
var mounts = []struct{ fstype, dir string }{
	{"proc", "/proc"},
	{"sysfs", "/sys"},
	{"devtmpfs", "/dev"},
	{"tracefs", "/sys/kernel/tracing"},
	{"debugfs", "/sys/kernel/debug"},
	{"bpf", "/sys/fs/bpf"},
}

func main() {
	code := run()
	fmt.Printf("\nPROBEE-VMTEST-EXIT=%d\n", code)
	os.Stdout.Sync()
	syscall.Sync()
	if os.Getpid() == 1 {
		syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	}
	os.Exit(code)
}

func run() int {
	for _, m := range mounts {
		os.MkdirAll(m.dir, 0o755)
		if err := syscall.Mount(m.fstype, m.dir, m.fstype, 0, ""); err != nil && !errors.Is(err, syscall.EBUSY) {
			fmt.Printf("init: mount %s on %s: %v\n", m.fstype, m.dir, err)
		}
	}
	var uts syscall.Utsname
	syscall.Uname(&uts)
	fmt.Printf("init: kernel %s\n", utsString(uts.Release[:]))
	b, err := os.ReadFile("/etc/probee-vmtest.json")
	var cfg config
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		fmt.Printf("init: read /etc/probee-vmtest.json: %v\n", err)
		return 125
	}
	cmd := exec.Command(cfg.Test, os.Args[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = cfg.Dir, os.Stdout, os.Stdout
	cmd.Env = append([]string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/tmp", "TMPDIR=/tmp",
	}, cfg.Env...)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Printf("init: run %s: %v\n", cfg.Test, err)
		return 126
	}
	return 0
}

func utsString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}
