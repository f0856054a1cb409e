package proctrack

import (
	"path/filepath"

	"github.com/probee/probee/resolver"
)

// defaultInterp is the ld.so every dynamically linked x86-64 program asks
// for; the interpreter of a script command (sh, python) uses it too.
const defaultInterp = "/lib64/ld-linux-x86-64.so.2"

// attachCommandGate holds the traced command (its executable at path)
// until its unwind tables are loaded. A dynamically linked command (or a
// script, through its interpreter) is held by the ld.so gate: at start-up
// once ld.so has mapped its libraries, before any constructor runs, and
// again at every dlopen, in the command and in every traced child that
// execs a program using the same ld.so. A static command is held at its
// ELF entry point.
func (t *Tracker) attachCommandGate(path string) {
	interp, err := resolver.Interpreter(path)
	static := err == nil && interp == ""
	if !static {
		if interp == "" {
			interp = defaultInterp
		}
		gerr := t.attachLdsoGate(t.proc.path(interp))
		if gerr == nil || err != nil { // attached, or a script: no entry point to fall back on
			t.gateWarn(gerr)
			return
		}
		t.debugf("ld.so gate: %v (using the entry point)", gerr)
	}
	off, err := resolver.EntryFileOffset(path)
	if err == nil {
		err = t.k.AttachGate(path, off)
	}
	t.gateWarn(err)
}

func (t *Tracker) gateWarn(err error) {
	if err != nil {
		t.warnf("exec gate: %v (the command's first stacks may be partial)", err)
	}
}

// attachLdsoGate puts the ld.so gate on the ld.so at path.
func (t *Tracker) attachLdsoGate(path string) error {
	d, err := resolver.FindLdsoDebug(path)
	if err != nil {
		return err
	}
	return t.k.AttachLdsoGate(path, d.StateOffset, d.StateAddr, d.RDebugAddr)
}

// attachPIDGate puts the ld.so gate on the ld.so of the -p process, so that
// libraries it dlopens later are unwound from their first event.
func (t *Tracker) attachPIDGate(pid int) {
	interp, err := resolver.Interpreter(t.proc.pidPath(pid, "exe"))
	if err == nil && interp != "" {
		err = t.attachLdsoGate(filepath.Join(t.proc.pidPath(pid, "root"), interp))
	}
	if err != nil {
		t.warnf("ld.so gate for pid %d: %v (the first stacks of libraries it dlopens may be partial)", pid, err)
	}
}
