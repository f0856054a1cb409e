package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// kernelMeta is Debian's metapackage for the current cloud kernel: its LZ4
// image boots a few seconds faster under emulation than the generic XZ one.
const kernelMeta = "linux-image-cloud-amd64"

// kernel returns the path of a cached vmlinuz for the current Debian kernel
// package, downloading and extracting it first when it is not cached.
func kernel(cache string) (string, error) {
	pkg, err := kernelPackage()
	if err != nil {
		if old := newestCached(cache); old != "" {
			logf("cannot resolve %s (%v): using the cached %s", kernelMeta, err, filepath.Base(old))
			return old, nil
		}
		return "", err
	}
	dst := filepath.Join(cache, "vmlinuz-"+pkg)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	logf("downloading %s (once; cached in %s)", pkg, cache)
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	return dst, download(pkg, dst)
}

// kernelPackage resolves the metapackage to today's versioned package
// (ABI numbers change and old packages leave the archive).
func kernelPackage() (string, error) {
	pkg, err := dependsOn(kernelMeta)
	if err == nil {
		return pkg, nil
	}
	logf("apt-cache has no %s (%v): running apt-get update", kernelMeta, err)
	if err := aptUpdate(); err != nil {
		return "", err
	}
	return dependsOn(kernelMeta)
}

func dependsOn(meta string) (string, error) {
	out, err := exec.Command("apt-cache", "depends", meta).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends %s: %w", meta, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "Depends:" && strings.HasPrefix(f[1], "linux-image-") {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("apt-cache depends %s names no linux-image package", meta)
}

// download fetches pkg with apt-get download and extracts only its
// ./boot/vmlinuz-* into dst (the package is never installed).
func download(pkg, dst string) error {
	tmp, err := os.MkdirTemp("", "probee-vmtest-deb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	get := exec.Command("apt-get", "download", "-q", pkg)
	get.Dir, get.Stdout, get.Stderr = tmp, os.Stderr, os.Stderr
	if err := get.Run(); err != nil {
		return fmt.Errorf("apt-get download %s: %w (run apt-get update, or check the network)", pkg, err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s left %d .deb files, want 1", pkg, len(debs))
	}
	part := dst + ".part"
	script := `dpkg-deb --fsys-tarfile "$1" | tar -xO --wildcards './boot/vmlinuz-*' > "$2"`
	x := exec.Command("sh", "-c", script, "sh", debs[0], part)
	x.Stderr = os.Stderr
	if err := x.Run(); err != nil {
		os.Remove(part)
		return fmt.Errorf("extract vmlinuz from %s: %w", filepath.Base(debs[0]), err)
	}
	if fi, err := os.Stat(part); err != nil || fi.Size() < 1<<20 {
		os.Remove(part)
		return fmt.Errorf("extract vmlinuz from %s: no ./boot/vmlinuz-* in the package", filepath.Base(debs[0]))
	}
	return os.Rename(part, dst)
}

func newestCached(cache string) string {
	m, _ := filepath.Glob(filepath.Join(cache, "vmlinuz-*"))
	var ok []string
	for _, p := range m {
		if !strings.HasSuffix(p, ".part") {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		return ""
	}
	sort.Strings(ok)
	return ok[len(ok)-1]
}

var aptUpdated bool

func aptUpdate() error {
	if aptUpdated {
		return nil
	}
	aptUpdated = true
	cmd := exec.Command("apt-get", "update", "-qq")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get update: %w (run make vmtest as root on Debian)", err)
	}
	return nil
}

// ensureQemu finds qemu-system-x86_64, which tests/install-deps.sh
// installs (make vmtest runs it first): the tests install nothing.
func ensureQemu() (string, error) {
	p, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return "", fmt.Errorf("qemu-system-x86_64 not found: run tests/install-deps.sh as root (or apt-get install qemu-system-x86)")
	}
	return p, nil
}
