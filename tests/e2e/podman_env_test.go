package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/probee/probee/internal/testgate"
)

// The podman tests run real containers: Debian's podman (crun, overlay
// storage), images imported from a root directory (no registry), run as
// the shared notes say they must be here (no network; rlimits within
// root's, which lacks CAP_SYS_RESOURCE in the container).
var podmanRunFlags = []string{"--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}

// needPodman skips t unless it runs as root with podman installed (under
// PROBEE_REQUIRE_KERNEL=1 a missing podman fails: tests/install-deps.sh
// installs it), and makes the host's cgroups acceptable to crun for the
// test's duration (hybridCgroups).
func needPodman(t *testing.T) {
	t.Helper()
	testgate.Root(t)
	if _, err := exec.LookPath("podman"); err != nil {
		if testgate.Required() {
			t.Fatalf("podman not found but %s=1: run tests/install-deps.sh as root", testgate.EnvRequire)
		}
		t.Skip("podman not found: run tests/install-deps.sh as root (apt-get install podman)")
	}
	hybridCgroups(t)
}

// hybridCgroups: crun refuses a host that keeps cgroup v1 hierarchies
// beside a cgroup2 one holding controllers ("cgroups in hybrid mode not
// supported, drop all controllers from cgroupv2"); such Debian hosts keep
// hugetlb in cgroup2. Each of those controllers is mounted as a v1
// hierarchy beside the others for the test's duration, which takes it
// out of cgroup2, and given back when the test ends (giveBack). Nothing
// happens on a host with cgroup2 alone, or v1 alone.
func hybridCgroups(t *testing.T) {
	t.Helper()
	v1, v2 := cgroupMounts(t)
	if len(v1) == 0 || v2 == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ctrl := range strings.Fields(string(b)) {
		dir := filepath.Join(filepath.Dir(v1[0]), ctrl)
		made := os.Mkdir(dir, 0o755) == nil
		if err := unix.Mount("cgroup", dir, "cgroup", 0, ctrl); err != nil {
			if made {
				os.Remove(dir)
			}
			testgate.Feature(t, "podman (crun) on a hybrid cgroup host", true,
				fmt.Errorf("mount the %s controller as a v1 hierarchy at %s: %w", ctrl, dir, err))
		}
		t.Logf("hybrid cgroups: %s mounted as a v1 hierarchy at %s for the test", ctrl, dir)
		t.Cleanup(func() {
			if err := giveBack(dir, ctrl, v2); err != nil {
				t.Errorf("give %s back to cgroup2: %v", ctrl, err)
			}
			if made {
				os.Remove(dir)
			}
		})
	}
}

// cgroupMounts returns the mount points of the cgroup v1 hierarchies and
// of the cgroup2 one ("" when there is none).
func cgroupMounts(t *testing.T) (v1 []string, v2 string) {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		i := slices.Index(fs, "-")
		if i < 5 || i+1 >= len(fs) {
			continue
		}
		switch fs[i+1] {
		case "cgroup":
			v1 = append(v1, fs[4])
		case "cgroup2":
			if v2 == "" {
				v2 = fs[4]
			}
		}
	}
	return v1, v2
}

// giveBack ends the v1 hierarchy of ctrl mounted at dir, so that ctrl
// returns to the cgroup2 hierarchy at v2: the cgroups podman made in it
// are removed, then it is unmounted. A hierarchy ends only when its last
// cgroup is released: one removed a moment ago may still be dying and
// keep it alive, unmounted and holding ctrl, so it is mounted again (the
// same hierarchy) and unmounted once more until ctrl is back.
func giveBack(dir, ctrl, v2 string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		removeCgroups(dir)
		if err := unix.Unmount(dir, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
		for i := 0; i < 20; i++ {
			b, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
			if err != nil {
				return err
			}
			if slices.Contains(strings.Fields(string(b)), ctrl) {
				return nil
			}
			time.Sleep(25 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not back in %s after 10s (see /proc/cgroups)", ctrl, v2)
		}
		if err := unix.Mount("cgroup", dir, "cgroup", 0, ctrl); err != nil {
			return fmt.Errorf("mount %s again to end it: %w", dir, err)
		}
	}
}

// removeCgroups removes the cgroups below dir, deepest first (one that
// still holds a process stays).
func removeCgroups(dir string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
}

// podman runs podman with args and returns its output, trimmed; a
// failure fails t, or skips it (fails under PROBEE_REQUIRE_KERNEL=1)
// when podman cannot run containers here (canSkip).
func podman(t *testing.T, canSkip bool, args ...string) string {
	t.Helper()
	cmd := exec.Command("podman", args...)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		err = fmt.Errorf("podman %s: %w", strings.Join(args, " "), err)
		if canSkip {
			testgate.Feature(t, "podman run", true, err)
		}
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// uniqueName is a name for an image or container of this test run.
func uniqueName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "probee-e2e-" + hex.EncodeToString(b)
}

// podmanImage imports root (the container's root directory) as an image
// of one layer (tar -C root -c . | podman import -), removed when the
// test ends; it returns the image's name.
func podmanImage(t *testing.T, root string) string {
	t.Helper()
	tarball := filepath.Join(t.TempDir(), "root.tar")
	if out, err := exec.Command("tar", "-C", root, "-cf", tarball, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar %s: %v\n%s", root, err, out)
	}
	name := "localhost/" + uniqueName() + ":1"
	podman(t, false, "import", "-q", tarball, name)
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", name).Run() })
	return name
}

// podmanLayer is the host directory of the image's layer (overlay
// storage): a container's files are mapped from there.
func podmanLayer(t *testing.T, image string) string {
	t.Helper()
	dir := podman(t, false, "image", "inspect", "--format", "{{.GraphDriver.Data.UpperDir}}", image)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("layer of %s: %v", image, err)
	}
	return dir
}

// podmanCtr is a container started by podmanStart.
type podmanCtr struct {
	name, id string // id as podman run -d prints it
	pid      int    // its process, in the host's pid namespace
}

// podmanStart runs argv in a new container of image, detached, removed
// (killed) when the test ends, and returns it once its process runs.
func podmanStart(t *testing.T, image string, argv ...string) podmanCtr {
	t.Helper()
	c := podmanCtr{name: uniqueName()}
	args := append(append([]string{"run", "-d", "--name", c.name}, podmanRunFlags...), image)
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", "-t", "0", c.name).Run() })
	c.id = podman(t, true, append(args, argv...)...)
	pid := podman(t, false, "inspect", "--format", "{{.State.Pid}}", c.name)
	c.pid, _ = strconv.Atoi(pid)
	if c.pid <= 0 {
		t.Fatalf("container %s: pid %q", c.name, pid)
	}
	return c
}

// podmanRun runs argv in a new container of image to its end, removed
// then, and returns the container's id.
func podmanRun(t *testing.T, image string, argv ...string) string {
	t.Helper()
	cidfile := filepath.Join(t.TempDir(), "cid")
	args := append(append([]string{"run", "--rm", "--cidfile", cidfile}, podmanRunFlags...), image)
	podman(t, true, append(args, argv...)...)
	id, err := os.ReadFile(cidfile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(id))
}

// waitMaps waits until process pid maps a file whose path contains s.
func waitMaps(t *testing.T, pid int, s string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !mapsHas(pid, s) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d maps no %s after 5s", pid, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
