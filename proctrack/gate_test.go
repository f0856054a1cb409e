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
			r.wantKernel(want...)
			if w := r.warnings(); len(w) != tt.warnings {
				t.Errorf("warnings %q, want %d", w, tt.warnings)
			}
		})
	}
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
