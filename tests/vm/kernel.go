package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// kernelMeta is Debian's metapackage for a release's cloud kernel: its LZ4
// image boots a few seconds faster under emulation than the generic XZ one.
const kernelMeta = "linux-image-cloud-amd64"

// A release is one kernel of the matrix: the cloud kernel of a Debian suite.
type release struct {
	Version string // major.minor, as VMTEST_KERNELS names it
	Suite   string
}

// matrix is what make vmtest boots: Debian 11, 12 and 13.
var matrix = []release{{"5.10", "bullseye"}, {"6.1", "bookworm"}, {"6.12", "trixie"}}

// selectKernels picks the releases VMTEST_KERNELS names (comma or space
// separated versions; empty: all).
func selectKernels(sel string) ([]release, error) {
	if strings.TrimSpace(sel) == "" {
		return matrix, nil
	}
	var out []release
	for _, v := range strings.FieldsFunc(sel, func(r rune) bool { return r == ',' || r == ' ' }) {
		r, ok := findRelease(v)
		if !ok {
			return nil, fmt.Errorf("VMTEST_KERNELS names kernel %q: the matrix has %s", v, versions(matrix))
		}
		out = append(out, r)
	}
	return out, nil
}

func findRelease(v string) (release, bool) {
	for _, r := range matrix {
		if r.Version == v || r.Suite == v {
			return r, true
		}
	}
	return release{}, false
}

func versions(rs []release) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Version)
	}
	return strings.Join(s, ", ")
}

// kernel returns the path of a cached vmlinuz of r, downloading and
// extracting it first when it is not cached. Without the network, the
// newest cached image of the release serves.
func kernel(cache string, r release) (string, error) {
	apt := privateApt{dir: filepath.Join(cache, "apt", r.Suite), suite: r.Suite}
	pkg, err := resolve(apt, r)
	if err != nil {
		if old := newestCached(cache, r); old != "" {
			logf("cannot resolve %s of %s (%v): using the cached %s", kernelMeta, r.Suite, err, filepath.Base(old))
			return old, nil
		}
		return "", err
	}
	dst := filepath.Join(cache, "vmlinuz-"+pkg)
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	logf("downloading %s (once; cached in %s)", pkg, cache)
	if err := fetchImage(apt, pkg, dst); err != nil {
		// Lists of an earlier run may name a package the archive dropped.
		if uerr := apt.update(); uerr != nil {
			return "", err
		}
		if pkg, err = resolve(apt, r); err != nil {
			return "", err
		}
		dst = filepath.Join(cache, "vmlinuz-"+pkg)
		return dst, fetchImage(apt, pkg, dst)
	}
	return dst, nil
}

// resolve names today's versioned package of r's metapackage (ABI numbers
// change and old packages leave the archive), updating the private lists
// when they are missing.
func resolve(apt privateApt, r release) (string, error) {
	pkg, err := apt.dependsOn(kernelMeta)
	if err != nil {
		if err := apt.update(); err != nil {
			return "", err
		}
		if pkg, err = apt.dependsOn(kernelMeta); err != nil {
			return "", err
		}
	}
	if !strings.HasPrefix(pkg, "linux-image-"+r.Version+".") {
		return "", fmt.Errorf("%s of %s is %s, not a %s kernel: update the matrix in tests/vm/kernel.go", kernelMeta, r.Suite, pkg, r.Version)
	}
	return pkg, nil
}

// fetchImage downloads pkg and extracts only its ./boot/vmlinuz-* into dst
// (the package is never installed).
func fetchImage(apt privateApt, pkg, dst string) error {
	tmp, err := os.MkdirTemp("", "probee-vmtest-deb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := apt.download(pkg, tmp); err != nil {
		return err
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

// newestCached is the newest cached image of r ("" when none).
func newestCached(cache string, r release) string {
	m, _ := filepath.Glob(filepath.Join(cache, "vmlinuz-linux-image-"+r.Version+".*"))
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

// ensureQemu finds qemu-system-x86_64, which tests/install-deps.sh
// installs (make vmtest runs it first): the tests install nothing.
func ensureQemu() (string, error) {
	p, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return "", fmt.Errorf("qemu-system-x86_64 not found: run tests/install-deps.sh as root (or apt-get install qemu-system-x86)")
	}
	return p, nil
}
