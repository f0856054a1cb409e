package proctrack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/probee/probee/bpf/wire"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/vdso"
)

// System-wide, the first mapping of each file on the machine, as soon as
// its record is read (OnMmapRead, before records are ordered), loads its
// table, once for every process that maps it; a file in a container is
// read under the process's root; a path that no longer names the mapped
// file (replaced since) is skipped.
func TestFileTables(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { c.SystemWide, k.byFile = true, true })
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	for pid := 40; pid < 43; pid++ {
		r.proc.process(pid, r.proc.root, app, lib)
		r.tr.OnMmapRead(mapped(pid, app))
		r.tr.OnMmapRead(mapped(pid, lib))
	}
	ctr := t.TempDir()
	r.proc.process(50, ctr)
	r.tr.OnMmapRead(mapped(50, r.proc.file(ctr, "/opt/ctr-only", appAt)))
	old := r.proc.file(r.proc.root, "/usr/lib/libold.so", libAt)
	r.replace("/usr/lib/libold.so")
	r.tr.OnMmapRead(mapped(44, old))
	r.tr.Stop() // waits for the queued files
	r.wantKernel("SetFileModules [/usr/bin/app]", "SetFileModules [/usr/lib/liba.so]",
		"SetFileModules [/opt/ctr-only]")
	if !slices.ContainsFunc(r.debugLines(), func(l string) bool {
		return strings.Contains(l, "libold.so") && strings.Contains(l, "names another file or none")
	}) {
		t.Errorf("no debug line for the replaced file: %q", r.debugLines())
	}
}

// replace puts a new file at name in the fake root, as a package update
// does (a new inode renamed over the old path).
func (r *rig) replace(name string) {
	r.t.Helper()
	path := filepath.Join(r.proc.root, name)
	img, _ := elfImage()
	r.proc.write(path+".new", img)
	if err := os.Rename(path+".new", path); err != nil {
		r.t.Fatal(err)
	}
}

// Files are loaded by identity only in a system-wide run with DWARF tables,
// on a kernel that finds tables by file. On such a kernel New gives it the
// vDSO's table at once, in every mode with tables: a process never
// registered (a forked child, system-wide) unwinds out of clock_gettime
// from its first event.
func TestFileTablesWhen(t *testing.T) {
	vdso := []string{"SetFileModules [[vdso]]"}
	tests := []struct {
		name                       string
		systemWide, byFile, tables bool
		start, want                []string // calls by New, and then
	}{
		{"system-wide", true, true, true, vdso, []string{"SetFileModules [/usr/bin/app]"}},
		{"-p or -- CMD", false, true, true, vdso, nil},
		{"kernel without bpf_find_vma", true, false, true, nil, nil},
		{"--unwind fp", true, true, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(c *Config, k *fakeKernel) {
				c.SystemWide, k.byFile, c.Tables = tt.systemWide, tt.byFile, tt.tables
			})
			if !slices.Equal(r.start, tt.start) {
				t.Errorf("kernel calls of New: %q, want %q", r.start, tt.start)
			}
			app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
			r.tr.OnMmapRead(mapped(40, app))
			r.tr.Stop()
			r.wantKernel(tt.want...)
		})
	}
}

// A process's [vdso] mapping gets the vDSO's table among its modules; a
// [vdso] of another size (a 32-bit process's image) gets none.
func TestProcessVDSO(t *testing.T) {
	img, err := vdso.Image()
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil)
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	const at = 0x7fff00000000
	mine := procmaps.Mapping{Start: at, End: at + uint64(len(img)), Perms: "r-xp", Dev: "00:00", Path: vdso.Path}
	other := mine
	other.End += 0x1000
	r.proc.process(10, r.proc.root, app, mine)
	r.proc.process(11, r.proc.root, app, other)
	r.seen(10)
	r.seen(11)
	r.tr.OnProcessEvent(gateStop(10))
	r.tr.OnProcessEvent(gateStop(11))
	r.wantKernel("SetProcessModules 10 [/usr/bin/app [vdso]]", "Continue 10", "SetProcessModules 11 [/usr/bin/app]", "Continue 11")
}

// System-wide, a file loaded by identity whose table the sweep lets go
// (no tracked process maps it) is forgotten by the kernel side too, and
// loaded again when a process maps it again.
func TestFileTablesForgotten(t *testing.T) {
	r := newRig(t, func(c *Config, k *fakeKernel) { c.SystemWide, k.byFile = true, true })
	r.tr.tables.idle = 0
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(40, r.proc.root, app, lib) // never tracked
	r.tr.OnMmapRead(mapped(40, lib))
	r.waitKernel("SetFileModules [/usr/lib/liba.so]")
	r.proc.process(10, r.proc.root, app)
	r.seen(10)
	r.tr.OnProcessEvent(exited(99)) // a sweep
	r.wantKernel(fmt.Sprintf("ForgetFiles [%s/%d]", lib.Dev, lib.Inode))
	r.tr.OnMmapRead(mapped(41, lib))
	r.waitKernel("SetFileModules [/usr/lib/liba.so]")
}

// waitKernel waits until the kernel calls since the last check are want
// (a second at most): the system-wide loader calls from its goroutine.
func (r *rig) waitKernel(want ...string) {
	r.t.Helper()
	var got []string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		got = append(got, r.k.calls()...)
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Equal(got, want) {
		r.t.Errorf("kernel calls:\n got %q\nwant %q", got, want)
	}
}

// System-wide, a file whose table did not fit (wire.ErrTablesFull) is
// offered again at each sweep while it is refused, and said once per
// refusal (a refusal not tried again, wire.ErrTablesStillFull, is not
// said); once loaded it is no longer offered.
func TestFileTablesRefusedRetried(t *testing.T) {
	full := fmt.Errorf("liba.so: %w in the unwind table budget", wire.ErrTablesFull)
	r := newRig(t, func(c *Config, k *fakeKernel) {
		c.SystemWide, k.byFile = true, true
		k.fileErrs = []error{nil, full, wire.ErrTablesStillFull} // the first: the vDSO's (New)
	})
	r.tr.tables.idle = 0
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(10, r.proc.root, lib)
	r.seen(10) // tracked: the sweeps keep its file
	r.tr.OnMmapRead(mapped(10, lib))
	r.waitKernel("SetFileModules [/usr/lib/liba.so]")
	for i := range 3 { // refused again, then loaded, then not offered
		r.tr.tables.sweep()
		if i < 2 {
			r.waitKernel("SetFileModules [/usr/lib/liba.so]")
		}
	}
	r.tr.Stop()
	r.wantKernel()
	if n := len(r.warnings()); n != 1 {
		t.Errorf("%d warnings, want 1 (the first refusal): %q", n, r.warnings())
	}
}
