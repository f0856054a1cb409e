package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/objfile"
)

// attachLdsoGate puts the ld.so gate on the ld.so at path, unless that
// file (by device and inode) has it already.
func (t *Tracker) attachLdsoGate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	id := fileID{procmaps.StatDev(st.Dev), st.Ino}
	t.gmu.Lock()
	defer t.gmu.Unlock()
	if t.ldsoGated[id] {
		return nil
	}
	d, err := objfile.FindLdsoDebug(path)
	if err != nil {
		return err
	}
	if err := t.k.AttachLdsoGate(path, d.StateOffset, d.StateAddr, d.RDebugAddr); err != nil {
		return err
	}
	t.ldsoGated[id] = true
	return nil
}

// attachPIDGate puts the ld.so gate on the ld.so of process pid (the
// interpreter of its program, in its root) unless that file has it: for
// the -p process, so that libraries it dlopens later are unwound from
// their first event; at a gate stop, for a traced process that exec'd a
// program of another root (a container's ld.so), so that the libraries it
// maps next are.
func (t *Tracker) attachPIDGate(pid int) error {
	interp, err := objfile.Interpreter(t.proc.pidPath(pid, "exe"))
	if err == nil && interp != "" {
		err = t.attachLdsoGate(filepath.Join(t.proc.pidPath(pid, "root"), interp))
	}
	if err != nil {
		return fmt.Errorf("ld.so gate for pid %d: %w (the first stacks of libraries it dlopens may be partial)", pid, err)
	}
	return nil
}

// attachRootGate stops traced processes that exec under another root
// than probee's (a chroot, a container): their program and ld.so are that
// root's files, which the ld.so gate does not hold (see gateStop).
func (t *Tracker) attachRootGate() {
	if err := t.k.AttachRootGate(); err != nil {
		t.warnf("%v (the first stacks of programs started in a container may be partial)", err)
	}
}
