package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// installShell puts the machine's sh and its libraries into the
// container's root, at their own paths.
func installShell(t *testing.T, e ctrEnv) {
	t.Helper()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	install(t, sh, filepath.Join(e.root, "bin/sh"))
	for _, lib := range sharedLibs(t, sh) {
		install(t, lib, filepath.Join(e.root, lib))
	}
}

// Short-lived processes in a container (another mount namespace: their
// maps show the container's paths, which name other files or none on the
// host) run before the kernel has their files' tables: their stacks are
// finished in user space after they exited, with their /proc/PID gone.
// The tables come from their living parent's root, the container's shell:
// the stacks are complete. Before, 88-3962 stacks a run of a podman
// container came out "[truncated];box_leaf" (0 on the host).
func TestContainerShortLived(t *testing.T) {
	e := newCtrEnv(t)
	installShell(t, e)
	en := enters[2] // pivot_root in a new mount namespace
	label := e.lib() + ":box_leaf"
	b := start(t, "", "--uprobe", label, "-d", "5s")
	b.waitFor(t, "attached", 10*time.Second)
	loop := fmt.Sprintf(`i=0; while [ $i -lt 30 ]; do LD_LIBRARY_PATH=%s %s 0 0.03; i=$((i+1)); done`, e.host, e.app())
	argv := en.argv(e.root, "/bin/sh", "-c", loop)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	b.wait(t, 15*time.Second)
	t.Logf("stderr:\n%s", b.stderr())
	if n := ctrStacks(t, folded(t, b.cmd.Stdout.(*bytes.Buffer).String()), label, 0.99); n < 300 {
		t.Errorf("%d hits, want >= 300", n)
	}
}
