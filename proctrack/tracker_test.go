package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Addresses of the fake processes' mappings.
const (
	appAt  = 0x400000
	libAt  = 0x7f0000000000
	lib2At = 0x7f0000100000
)

// seen makes pid a tracked process (its tables loaded) and forgets the
// calls that took.
func (r *rig) seen(pid int) {
	r.t.Helper()
	r.tr.OnProcessEvent(newProcess(pid, 0))
	r.k.calls()
}

// A process seen for the first time gets its tables loaded and its
// executable mappings snapshotted in the history from one /proc/PID/maps
// read; seen again, nothing is loaded.
func TestNewProcess(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root, app, heap(0x600000))
	r.tr.OnProcessEvent(newProcess(10, 0))
	r.wantKernel("SetProcessModules 10 [/usr/bin/app]")
	r.wantMaps(10, "[/usr/bin/app]")
	r.tr.OnProcessEvent(newProcess(10, 0))
	r.wantKernel()
	r.wantMaps(10, "[/usr/bin/app]")
}

// A forked child inherits its parent's mappings in the history. A child
// that is gone before its /proc entry is read loads nothing and is no
// warning: the parent's mappings name its stacks.
func TestFork(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root, app)
	r.seen(10)

	r.proc.process(11, r.proc.root, app)
	r.tr.OnProcessEvent(newProcess(11, 10))
	r.wantKernel("SetProcessModules 11 [/usr/bin/app]")
	r.wantMaps(11, "[/usr/bin/app]")

	r.tr.OnProcessEvent(newProcess(12, 10)) // no /proc/12
	r.wantKernel()
	r.wantMaps(12, "[/usr/bin/app]")
	if w := r.warnings(); len(w) > 0 {
		t.Errorf("warnings for a child gone: %q", w)
	}
}

// An exec replaces a tracked process's mappings: the history starts a new
// image, and the new image's records reload the tables from /proc, which
// no longer lists the old image. A fork record goes to the history alone.
func TestExec(t *testing.T) {
	r := newRig(t, nil)
	sh := r.proc.file(r.proc.root, "/bin/sh", appAt)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root, sh)
	r.seen(10)

	r.proc.setMaps(10, app)
	r.tr.OnMmap(execed(10))
	r.tr.OnMmap(mapped(10, app))
	r.tr.OnMmap(forked(11, 10))
	r.wantMaps(10, "[/usr/bin/app]")
	r.wantMaps(11, "[/usr/bin/app]")
	r.wantKernel()
	if n := r.clock.fire(); n != 1 {
		t.Fatalf("%d reloads after the exec, want 1", n)
	}
	r.wantKernel("SetProcessModules 10 [/usr/bin/app]")
}

// New code mapped by tracked processes (dlopen, mmap) reloads their tables
// once for all the records that came together; a mapping already loaded
// (whatever path its record gives) and a process not tracked reload
// nothing.
func TestNewCodeCoalesced(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	lib2 := r.proc.file(r.proc.root, "/usr/lib/libb.so", lib2At)
	for _, pid := range []int{10, 11} {
		r.proc.process(pid, r.proc.root, app)
		r.seen(pid)
	}

	r.tr.OnMmap(mapped(10, app))
	inRoot := app // the record of a chrooted process: the path in its root
	inRoot.Path = "/app"
	r.tr.OnMmap(mapped(11, inRoot))
	r.tr.OnMmap(mapped(99, lib))
	if n := r.clock.fire(); n != 0 {
		t.Errorf("a loaded mapping or an untracked process scheduled %d reloads", n)
	}
	r.proc.setMaps(10, app, lib, lib2)
	r.proc.setMaps(11, app, lib)
	r.tr.OnMmap(mapped(10, lib))
	r.tr.OnMmap(mapped(11, lib))
	r.tr.OnMmap(mapped(10, lib2))
	if n := r.clock.fire(); n != 1 {
		t.Errorf("%d reloads for three records, want 1", n)
	}
	r.wantKernel("SetProcessModules 10 [/usr/bin/app /usr/lib/liba.so /usr/lib/libb.so]",
		"SetProcessModules 11 [/usr/bin/app /usr/lib/liba.so]")
	r.wantMaps(10, "[/usr/bin/app /usr/lib/liba.so /usr/lib/libb.so]")
	r.wantMaps(11, "[/app /usr/lib/liba.so]")
	r.wantMaps(99, "[/usr/lib/liba.so]")
}

// An exit drops the process's state: its later records reload nothing.
func TestExit(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, app)
	r.seen(10)
	r.tr.OnProcessEvent(exited(10))
	r.proc.setMaps(10, app, lib)
	r.tr.OnMmap(mapped(10, lib))
	if n := r.clock.fire(); n != 0 {
		t.Errorf("a record after the exit scheduled %d reloads", n)
	}
	r.wantKernel()
}

// A new process given the pid of one that exited starts afresh: its tables
// are loaded, and its records reload it even when the old one was a
// traced command.
func TestPIDReuse(t *testing.T) {
	r := newRig(t, nil)
	r.ldso()
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	other := r.proc.file(r.proc.root, "/usr/bin/other", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, app)
	r.seen(10)
	r.tr.OnProcessEvent(exited(10))
	r.proc.process(10, r.proc.root, other)
	r.tr.OnProcessEvent(newProcess(10, 1))
	r.wantKernel("SetProcessModules 10 [/usr/bin/other]")

	r.proc.process(20, r.proc.root, app)
	if err := r.tr.TracePID(20); err != nil {
		t.Fatal(err)
	}
	r.tr.OnProcessEvent(exited(20))
	r.wantKernel("AddPID 20", "AttachRootGate", "SetProcessModules 20 [/usr/bin/app]")
	r.proc.process(20, r.proc.root, other)
	r.seen(20)
	r.proc.setMaps(20, other, lib)
	r.tr.OnMmap(mapped(20, lib))
	if n := r.clock.fire(); n != 1 {
		t.Errorf("%d reloads of the new pid 20, want 1", n)
	}
	r.wantKernel("SetProcessModules 20 [/usr/bin/other /usr/lib/liba.so]")
}

// The files of a process under another root are opened by the path that
// names the mapped file: the host path its maps show when it is chrooted
// in probee's mount namespace, its own path through /proc/PID/root when it
// is in another (where the host's file at that path, if any, is another).
func TestContainerRoot(t *testing.T) {
	tests := []struct {
		name      string
		hostOther bool   // the host has another file at the container's path
		chroot    string // the container's root in probee's (host paths in maps)
	}{
		{name: "other mount namespace"},
		{name: "other mount namespace, another file at that path on the host", hostOther: true},
		{name: "chroot in probee's mount namespace", chroot: "/srv/ctr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			ctr := t.TempDir()
			if tt.chroot != "" {
				ctr = filepath.Join(r.proc.root, tt.chroot)
			}
			if tt.hostOther {
				r.proc.write(filepath.Join(r.proc.root, "/usr/bin/app"), []byte("not the container's file"))
			}
			app := r.proc.file(ctr, "/usr/bin/app", appAt)
			app.Path = tt.chroot + app.Path
			r.proc.process(30, ctr, app)
			r.tr.OnProcessEvent(newProcess(30, 0))
			r.wantKernel("SetProcessModules 30 [" + app.Path + "]")
			if d := r.debugLines(); len(d) > 0 {
				t.Errorf("debug lines %q, want none", d)
			}
		})
	}
}

// The -p process enters the filter, gets the ld.so gate of its own root
// for its dlopens, and its tables.
func TestTracePID(t *testing.T) {
	r := newRig(t, nil)
	r.ldso()
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(10, r.proc.root, app)
	r.proc.symlink(r.proc.root+"/usr/bin/app", r.proc.pidDir(10)+"/exe")
	if err := r.tr.TracePID(10); err != nil {
		t.Fatal(err)
	}
	r.wantKernel("AddPID 10", "AttachLdsoGate "+r.proc.pidDir(10)+"/root/lib64/ld-linux-x86-64.so.2",
		"AttachRootGate", "SetProcessModules 10 [/usr/bin/app]")
	r.wantMaps(10, "[/usr/bin/app]")
}

// Without tables (--unwind fp) only the history hears of processes.
func TestWithoutTables(t *testing.T) {
	r := newRig(t, func(c *Config, _ *fakeKernel) { c.Tables = false })
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, app)
	if err := r.tr.TracePID(10); err != nil {
		t.Fatal(err)
	}
	r.tr.OnProcessEvent(newProcess(11, 10))
	r.tr.OnProcessEvent(gateStop(10))
	r.tr.OnMmap(mapped(10, lib))
	r.wantMaps(10, "[/usr/bin/app /usr/lib/liba.so]")
	r.tr.OnMmap(execed(10))
	r.tr.OnProcessEvent(exited(10))
	r.wantKernel("AddPID 10")
	r.wantMaps(11, "[/usr/bin/app]") // its parent's: no /proc/11
	r.wantMaps(10, "[]")             // a new image, no record of it yet
}

// After Stop nothing more is loaded, but the history still hears of the
// records handled while the session closes, and stopped processes resume.
func TestStop(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, app)
	r.seen(10)
	r.tr.Stop()
	r.proc.setMaps(10, app, lib)
	r.tr.OnMmap(mapped(10, lib))
	r.clock.fire()
	r.tr.OnProcessEvent(gateStop(10))
	r.wantKernel("Continue 10")
	r.wantMaps(10, "[/usr/bin/app /usr/lib/liba.so]")
}

// Under --unwind auto a Go binary gets an empty table without its CFI
// being read (Go keeps frame pointers), and its GoStack; under --unwind
// dwarf its table is read. Either way the kernel side forgets it once
// no process maps it.
func TestGoByFramePointers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, byFP := range []bool{true, false} {
		r := newRig(t, func(c *Config, _ *fakeKernel) { c.GoByFramePointers = byFP })
		img, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		r.proc.write(r.proc.root+"/usr/bin/gobin", img) // a mapped path names no link
		gobin := r.proc.mappingOf(r.proc.root+"/usr/bin/gobin", "/usr/bin/gobin", appAt)
		r.proc.process(10, r.proc.root, gobin)
		r.tr.OnProcessEvent(newProcess(10, 0))
		want, mods := 1, "[/usr/bin/gobin(fp)]"
		if byFP {
			want, mods = 0, "[/usr/bin/gobin(fp)(go)]"
		}
		r.wantKernel("SetProcessModules 10 " + mods)
		if got := r.tr.tables.cache.Len(); got != want {
			t.Errorf("GoByFramePointers %v: %d tables read, want %d", byFP, got, want)
		}
		r.tr.tables.idle = 0
		r.tr.OnProcessEvent(exited(10))
		r.wantKernel(fmt.Sprintf("ForgetFiles [%s/%d]", gobin.Dev, gobin.Inode))
	}
}

// ReadRunning hands the history every running process's mappings
// (system-wide, the processes that started before the run); a /proc
// entry that is no process is skipped.
func TestReadRunning(t *testing.T) {
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	sh := r.proc.file(r.proc.root, "/bin/sh", appAt)
	r.proc.process(10, r.proc.root, app)
	r.proc.process(12, r.proc.root, sh)
	if err := os.MkdirAll(filepath.Join(r.proc.root, "proc", "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.tr.ReadRunning()
	r.wantMaps(10, "[/usr/bin/app]")
	r.wantMaps(12, "[/bin/sh]")
}
