package proctrack

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/internal/procmaps"
)

// ctrRoot is a fake root where /usr/lib/libctr.so is spin-nofp on the host
// and chain-nofp in the container of pid 7 (its own mount namespace: its
// maps show its own paths), and pid 8, gone, was known only from a
// mapping record of the same file.
type ctrRoot struct {
	root string
	lib  procmaps.Mapping // pid 7's mapping of its libctr.so
	leaf uint64           // address of chain's leaf in that mapping
}

func newCtrRoot(t *testing.T) ctrRoot {
	t.Helper()
	root, lib, ctrLib := maptest.ContainerRoot(t)
	off := maptest.FuncFileOffset(t, ctrLib, "leaf")
	return ctrRoot{root: root, lib: lib, leaf: lib.Start + off}
}

// A container's library is symbolized from its own file, not from the
// host's file at the same path; and so is a process known only from a
// mapping record, once its container is gone, from the file read for the
// other process.
func TestImageContainerFiles(t *testing.T) {
	c := newCtrRoot(t)
	s := newTestHistory(c.root)
	if err := s.Snapshot(7); err != nil {
		t.Fatal(err)
	}
	if f := functionAt(s, 7, "", c.leaf); f != "leaf" {
		t.Errorf("pid 7: %q, want leaf (the container's build)", f)
	}
	s.AddMapping(8, c.lib) // pid 8 has no /proc entry
	if f := functionAt(s, 8, "", c.leaf); f != "leaf" {
		t.Errorf("pid 8, gone: %q, want leaf", f)
	}
}

// A process known only from a mapping record of a container's file is
// symbolized after it exits: the record's path names no file on the host,
// so its object is read while the process lives.
func TestImageContainerRecord(t *testing.T) {
	c := newCtrRoot(t)
	s := newTestHistory(c.root)
	s.AddMapping(7, c.lib)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		o := s.byFile[c.lib.FileKey()]
		s.mu.Unlock()
		if o != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the container's file was not read while the process lived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.RemoveAll(filepath.Join(c.root, "proc/7")); err != nil { // pid 7 exits
		t.Fatal(err)
	}
	if f := functionAt(s, 7, "", c.leaf); f != "leaf" {
		t.Errorf("%q, want leaf (the container's build)", f)
	}
}
