package proctrack

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/probee/probee/objfile"
)

// A traced process (-p, or -- CMD stopped right after its exec) gets the
// ld.so gate of its program's interpreter, in its own root, before its
// tables are loaded; without that ld.so a warning says its dlopens may be
// partial; a static program needs no gate and gets no warning.
func TestTracePIDGate(t *testing.T) {
	tests := []struct {
		name     string
		file     string // "elf", "static"
		ldso     bool   // the fake root has the ld.so
		gate     bool   // the ld.so gate is attached
		warnings int
	}{
		{"dynamic", "elf", true, true, 0},
		{"dynamic without its ld.so", "elf", false, false, 1},
		{"static", "static", true, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			if tt.ldso {
				r.ldso()
			}
			r.command(tt.file, "/usr/bin/cmd")
			r.proc.process(20, r.proc.root)
			r.proc.symlink(r.proc.root+"/usr/bin/cmd", r.proc.pidDir(20)+"/exe")
			if err := r.tr.TracePID(20); err != nil {
				t.Fatal(err)
			}
			want := []string{"AddPID 20"}
			if tt.gate {
				want = append(want, "AttachLdsoGate "+r.proc.pidDir(20)+"/root"+defaultInterp)
			}
			want = append(want, "AttachRootGate", "SetProcessModules 20 []")
			r.wantKernel(want...)
			if w := r.warnings(); len(w) != tt.warnings {
				t.Errorf("warnings %q, want %d", w, tt.warnings)
			}
		})
	}
}

// A gate stop of a process whose ld.so has no gate yet (one that exec'd a
// program in a container: the root gate) puts the gate on it, once; a
// process of probee's root, whose ld.so has it, gets none.
func TestGateStopNewLdso(t *testing.T) {
	r := newRig(t, nil)
	r.ldso()
	host := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.proc.process(20, r.proc.root, host)
	r.proc.symlink(r.proc.root+"/usr/bin/app", r.proc.pidDir(20)+"/exe")
	if err := r.tr.TracePID(20); err != nil {
		t.Fatal(err)
	}
	r.wantKernel("AddPID 20", "AttachLdsoGate "+r.proc.pidDir(20)+"/root"+defaultInterp, "AttachRootGate", "SetProcessModules 20 [/usr/bin/app]")
	ctr := t.TempDir()
	img, err := os.ReadFile(defaultInterp) // another file: the container's ld.so
	if err != nil {
		t.Fatal(err)
	}
	r.proc.write(ctr+defaultInterp, img)
	app := r.proc.file(ctr, "/usr/bin/app", appAt)
	r.proc.process(30, ctr, app)
	r.proc.symlink(ctr+"/usr/bin/app", r.proc.pidDir(30)+"/exe")
	r.proc.process(10, r.proc.root, host)
	r.proc.symlink(r.proc.root+"/usr/bin/app", r.proc.pidDir(10)+"/exe")
	r.seen(30)
	r.seen(10)
	for _, pid := range []int{30, 30, 10} {
		r.tr.OnProcessEvent(gateStop(pid))
	}
	r.wantKernel("SetProcessModules 30 [/usr/bin/app]", "AttachLdsoGate "+r.proc.pidDir(30)+"/root"+defaultInterp, "Continue 30",
		"SetProcessModules 30 [/usr/bin/app]", "Continue 30",
		"SetProcessModules 10 [/usr/bin/app]", "Continue 10")
}

// command writes the traced program's file at name: a dynamically linked
// ELF file, or a static ELF file (the test binary, when it is one).
func (r *rig) command(kind, name string) {
	r.t.Helper()
	path := r.proc.root + name
	switch kind {
	case "elf":
		r.proc.file(r.proc.root, name, appAt)
	case "static":
		self, err := os.Executable()
		if err != nil {
			r.t.Fatal(err)
		}
		if interp, err := objfile.Interpreter(self); err != nil || interp != "" {
			r.t.Skipf("the test binary is not static (%q, %v)", interp, err)
		}
		r.proc.symlink(self, path)
	}
}

func cut(s string) (string, string, bool) {
	i := slices.Index([]byte(s), ' ')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// The traced command, stopped right after its exec, has its program's
// table loaded before its first instruction; its gate stop, once ld.so
// has mapped its libraries, loads theirs before it is resumed. The
// records of those libraries reload it once more.
func TestCommandStoppedAfterExec(t *testing.T) {
	r := newRig(t, nil)
	r.ldso()
	app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
	r.proc.process(20, r.proc.root, app)
	r.proc.symlink(r.proc.root+"/usr/bin/app", r.proc.pidDir(20)+"/exe")
	if err := r.tr.TracePID(20); err != nil {
		t.Fatal(err)
	}
	r.wantKernel("AddPID 20", "AttachLdsoGate "+r.proc.pidDir(20)+"/root"+defaultInterp, "AttachRootGate",
		"SetProcessModules 20 [/usr/bin/app]")
	r.wantMaps(20, "[/usr/bin/app]")

	r.proc.setMaps(20, app, lib)
	r.tr.OnMmap(mapped(20, lib))
	r.tr.OnProcessEvent(gateStop(20))
	r.wantKernel("SetProcessModules 20 [/usr/bin/app /usr/lib/liba.so]", "Continue 20")
	if n := r.clock.fire(); n != 1 {
		t.Errorf("%d reloads after the libraries were mapped, want 1", n)
	}
	r.wantKernel("SetProcessModules 20 [/usr/bin/app /usr/lib/liba.so]")
}

// A gate stop (dlopen) loads the process's tables, then resumes it, also
// when the load or the resume fails (a warning says so).
func TestGateStop(t *testing.T) {
	tests := []struct {
		name            string
		gone            bool // /proc/10 unreadable
		setErr, contErr error
		kernel, warn    []string
	}{
		{name: "loaded",
			kernel: []string{"SetProcessModules 10 [/usr/bin/app /usr/lib/liba.so]", "Continue 10"}},
		{name: "kernel refuses the tables", setErr: errors.New("unwind maps full"),
			kernel: []string{"SetProcessModules 10 [/usr/bin/app /usr/lib/liba.so]", "Continue 10"},
			warn:   []string{"unwind tables of pid 10: unwind maps full"}},
		{name: "maps unreadable", gone: true,
			kernel: []string{"Continue 10"}},
		{name: "resume fails", contErr: errors.New("resume pid 10: no such process"),
			kernel: []string{"SetProcessModules 10 [/usr/bin/app /usr/lib/liba.so]", "Continue 10"},
			warn:   []string{"resume pid 10: no such process"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			app := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
			lib := r.proc.file(r.proc.root, "/usr/lib/liba.so", libAt)
			r.proc.process(10, r.proc.root, app)
			r.seen(10)
			r.proc.setMaps(10, app, lib)
			if tt.gone {
				r.proc.exit(10)
			}
			r.k.setErr, r.k.contErr = tt.setErr, tt.contErr
			r.tr.OnProcessEvent(gateStop(10))
			r.wantKernel(tt.kernel...)
			if w := r.warnings(); !slices.Equal(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
		})
	}
}
