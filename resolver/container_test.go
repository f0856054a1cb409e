package resolver

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

// ctrRoot is a fake root where /usr/lib/libctr.so is spin-nofp on the host
// and chain-nofp in the container of pid 7 (its own mount namespace: its
// maps show its own paths).
type ctrRoot struct {
	root string
}

func newCtrRoot(t *testing.T) ctrRoot {
	t.Helper()
	root, _, _ := maptest.ContainerRoot(t)
	return ctrRoot{root: root}
}

// -p PID resolves a library name to the file the process maps, through
// its root, not the host's file of that name.
func TestResolveContainerLib(t *testing.T) {
	c := newCtrRoot(t)
	ts := resolveOK(t, uspec(libT("libctr.so"), probespec.MatchExact, "leaf"), Scope{Root: c.root, PID: 7})
	want := filepath.Join(c.root, "proc/7/root/usr/lib/libctr.so")
	if len(ts) != 1 || ts[0].Path != want {
		t.Errorf("libctr.so:leaf in pid 7 = %v, want one target in %s", lines(ts), want)
	}
}

// -p PID resolves a path as the process sees it: a file it maps, else the
// path in its root, else (with a warning) probee's file at that path.
// Before, the host's file at the path was probed (0 hits, no warning).
func TestResolveContainerPath(t *testing.T) {
	c := newCtrRoot(t)
	installFixture(t, "chain-nofp", filepath.Join(c.root, "ctr/usr/bin/other"))
	installFixture(t, "chain-nofp", filepath.Join(c.root, "usr/bin/hostonly"))
	for _, tc := range []struct{ path, want, warn string }{
		{"/usr/lib/libctr.so", "proc/7/root/usr/lib/libctr.so", ""},
		{"/usr/bin/other", "proc/7/root/usr/bin/other", ""},
		{"/usr/bin/hostonly", "usr/bin/hostonly", "pid 7 has no /usr/bin/hostonly in its root"},
	} {
		var warn bytes.Buffer
		ts := resolveOK(t, uspec(pathT(tc.path), probespec.MatchExact, "leaf"), Scope{Root: c.root, PID: 7, Warn: &warn})
		if want := filepath.Join(c.root, tc.want); len(ts) != 1 || ts[0].Path != want {
			t.Errorf("%s:leaf in pid 7 = %v, want one target in %s", tc.path, lines(ts), want)
		}
		if !strings.Contains(warn.String(), tc.warn) || tc.warn == "" && warn.Len() > 0 {
			t.Errorf("%s: warnings %q, want %q", tc.path, warn.String(), tc.warn)
		}
	}
	if _, err := Resolve(uspec(pathT("/nowhere"), probespec.MatchExact, "leaf"), Scope{Root: c.root, PID: 7}); err == nil || !strings.Contains(err.Error(), "pid 7's root") {
		t.Errorf("a path in neither root: %v", err)
	}
}
