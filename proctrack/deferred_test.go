package proctrack

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/unwind"
)

// entryPC is the runtime address of the ELF entry point (_start) of the
// fake image mapped at start: its CFI says the stack ends there.
func entryPC(t *testing.T, path string, start uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Off == elfExecOffset {
			return start + f.Entry - p.Vaddr
		}
	}
	t.Fatalf("%s: no executable segment at offset %#x", path, elfExecOffset)
	return 0
}

// A stack the kernel handed over unfinished is finished with the table of
// the file it stopped in, from the mappings the history knows (the
// process may be gone), and counted; the kernel gets the file's table.
// Each stack handed over has the mapping records read at once.
func TestDeferredFinished(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { k.byFile = true })
	wakes := 0
	r.tr.SetRecordWake(func() { wakes++ })
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	pc := entryPC(t, filepath.Join(r.proc.root, "/usr/bin/app"), appAt)
	r.hist.Prime(10, []procmaps.Mapping{app}, "app")
	// The frame is the interrupted instruction (Exact): its own rule, not
	// the one of the instruction before (pc-1 is outside _start).
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10, PCs: []uint64{0x7f01, 0x7f02}, Exact: true,
		Regs: unwind.Regs{RIP: pc, RSP: 0x1000}})
	// A child forked before its first event, its mappings not known yet:
	// its parent's serve.
	r.tr.OnDeferred(wire.DeferredStack{TGID: 11, PPID: 10, Regs: unwind.Regs{RIP: pc + 1, RSP: 0x1000}})
	st := r.tr.FinishDeferred()
	r.wantKernel("SetFileModules [/usr/bin/app]", fmt.Sprintf("AddStack 10 [0x7f01 0x7f02 %#x] cut=false", pc),
		"SetFileModules [/usr/bin/app]", fmt.Sprintf("AddStack 11 [%#x] cut=false", pc+1))
	if st != (DeferredStats{Finished: 2}) {
		t.Errorf("stats %+v, want 2 finished", st)
	}
	if wakes != 2 {
		t.Errorf("records read at once %d times, want 2 (once per stack)", wakes)
	}
}

// Stacks of one process under one comm can come from two images (a
// shell's child runs the shell's code, then execs bash again): each is
// finished with the modules of its own image, even in one batch.
func TestDeferredTwoImagesOneComm(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { k.byFile = true })
	before := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	after := before
	const moved = 0x100000000
	after.Start, after.End = before.Start+moved, before.End+moved
	pc := entryPC(t, filepath.Join(r.proc.root, "/usr/bin/app"), appAt)
	// Pid 10, forked by 9, ran bash's image at before, then exec'd bash
	// again, mapped at after.
	r.hist.Prime(9, []procmaps.Mapping{before}, "bash")
	r.hist.Fork(10, 9, 0)
	r.hist.ExecReset(10, "bash")
	r.hist.AddMapping(10, after)
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10, Comm: "bash", Exact: true, Regs: unwind.Regs{RIP: pc, RSP: 0x1000}})
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10, Comm: "bash", Exact: true, Regs: unwind.Regs{RIP: pc + moved, RSP: 0x1000}})
	st := r.tr.FinishDeferred()
	if st != (DeferredStats{Finished: 2}) {
		t.Errorf("stats %+v, want 2 finished (kernel calls %q)", st, r.k.log)
	}
}

// A stack in a file whose table cannot be built is counted cut there, and
// the kernel is given an empty table for the file (frame pointers), so it
// hands over no more stacks of it; stacks after FinishDeferred are dropped.
func TestDeferredNoTable(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { k.byFile = true })
	gone := procmaps.Mapping{Start: libAt, End: libAt + 0x1000, Perms: "r-xp", Dev: "fd:01", Inode: 99, Path: "/usr/lib/gone.so"}
	r.hist.AddMapping(10, gone)
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10, Exact: true, Regs: unwind.Regs{RIP: libAt + 0x10}})
	st := r.tr.FinishDeferred()
	r.wantKernel("SetFileModules [/usr/lib/gone.so(fp)]", fmt.Sprintf("AddStack 10 [%#x] cut=true", libAt+0x10))
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10})
	if st = r.tr.FinishDeferred(); st != (DeferredStats{Cut: 1, Dropped: 1}) {
		t.Errorf("stats %+v, want 1 cut, 1 dropped", st)
	}
	r.wantKernel()
}

// A stack handed over in JIT code (anonymous executable memory, no table)
// is finished as the kernel walks it: by frame pointers there, then by
// the table of the file below, and counted whole.
func TestDeferredThroughJIT(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { k.byFile = true })
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	start := entryPC(t, filepath.Join(r.proc.root, "/usr/bin/app"), appAt)
	const jitAt, sp = 0x7e0000000000, 0x7ffd00000000
	jit := procmaps.Mapping{Start: jitAt, End: jitAt + 0x1000, Perms: "r-xp"}
	r.hist.Prime(10, []procmaps.Mapping{app, jit}, "app")
	stack := make([]byte, 64) // the JIT frame's saved rbp at sp+32, its return address above
	binary.LittleEndian.PutUint64(stack[40:], start+1)
	r.tr.OnDeferred(wire.DeferredStack{TGID: 10, Exact: true, Regs: unwind.Regs{RIP: jitAt + 0x10, RSP: sp, RBP: sp + 32},
		Stack: unwind.StackCopy{Addr: sp, Data: stack}})
	st := r.tr.FinishDeferred()
	r.wantKernel(fmt.Sprintf("AddStack 10 [%#x %#x] cut=false", jitAt+0x10, start+1))
	if st != (DeferredStats{Finished: 1}) {
		t.Errorf("stats %+v, want 1 finished", st)
	}
}
