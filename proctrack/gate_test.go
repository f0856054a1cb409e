package proctrack

import (
	"os"
	"slices"
	"testing"

	"github.com/probee/probee/resolver"
)

// The traced command is held by the ld.so gate when it has one (a script
// by the default ld.so), else at its ELF entry point; a script without a
// usable ld.so has no gate, and a warning says so.
func TestCommandGate(t *testing.T) {
	tests := []struct {
		name     string
		file     string // "elf", "script", "static"
		ldso     bool   // the fake root has the ld.so
		want     string // the gate attached, under the fake root
		warnings int
	}{
		{"dynamic", "elf", true, "AttachLdsoGate /lib64/ld-linux-x86-64.so.2", 0},
		{"dynamic without its ld.so", "elf", false, "AttachGate /usr/bin/cmd", 0},
		{"script", "script", true, "AttachLdsoGate /lib64/ld-linux-x86-64.so.2", 0},
		{"script without ld.so", "script", false, "", 1},
		{"static", "static", true, "AttachGate /usr/bin/cmd", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			if tt.ldso {
				r.ldso()
			}
			r.command(tt.file, "/usr/bin/cmd")
			if err := r.tr.TraceCommand(20, "/usr/bin/cmd"); err != nil {
				t.Fatal(err)
			}
			want := []string{"AddPID 20"}
			if tt.want != "" {
				verb, path, _ := cut(tt.want)
				want = append(want, verb+" "+r.proc.root+path)
			}
			want = append(want, "AttachRootGate")
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
	ldso := r.ldso()
	host := r.proc.file(r.proc.root, "/usr/bin/app", appAt)
	r.command("elf", "/usr/bin/app")
	if err := r.tr.TraceCommand(20, "/usr/bin/app"); err != nil {
		t.Fatal(err)
	}
	r.wantKernel("AddPID 20", "AttachLdsoGate "+ldso, "AttachRootGate")
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

// command writes the traced command's file at name: a dynamically linked
// ELF file, a script, or a static ELF file (the test binary, when it is
// one).
func (r *rig) command(kind, name string) {
	r.t.Helper()
	path := r.proc.root + name
	switch kind {
	case "elf":
		r.proc.file(r.proc.root, name, appAt)
	case "script":
		r.proc.write(path, []byte("#!/bin/sh\necho hi\n"))
	case "static":
		self, err := os.Executable()
		if err != nil {
			r.t.Fatal(err)
		}
		if interp, err := resolver.Interpreter(self); err != nil || interp != "" {
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
