package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// The ld.so gate loads the tables of libraries before their code runs:
// libraries mapped at start-up before their constructors, dlopen'd ones
// before dlopen runs their constructors and returns. No stack is partial.
func TestLdsoGate(t *testing.T) {
	testgate.Root(t)
	cases := []struct {
		name, bin, probe string
		args             []string
		want             []string // in every stack (the probe's own stacks only)
	}{
		{"dlopen-first-call", "dlmain-nofp", "libdlplugin.so:plugin_leaf", []string{"300", "0"},
			[]string{";main;call_plugin;plugin_entry;plugin_leaf"}},
		{"dlopen-constructor", "dlmain-nofp", "libdlplugin.so:plugin_ctor_leaf", []string{"1", "0"},
			[]string{";main;", ";_dl_init;", "plugin_init;plugin_ctor_leaf"}},
		{"startup-constructor", "cxx", "libc:malloc", nil, []string{";malloc"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probe := c.probe
			if lib, fn, _ := strings.Cut(probe, ":"); strings.HasSuffix(lib, ".so") {
				probe = fixture(t, lib) + ":" + fn
			}
			args := append([]string{"--unwind", "dwarf", "--uprobe", probe, "--", fixture(t, c.bin)}, c.args...)
			r := run(t, "", args...)
			stacks := folded(t, r.stdout)
			if r.code != 0 || len(stacks) == 0 {
				t.Fatalf("exit %d, %d stacks\n%s", r.code, len(stacks), r.stderr)
			}
			ctor := false
			for s := range stacks {
				for _, w := range c.want {
					if !strings.Contains(s, w) {
						t.Errorf("stack %q lacks %q", s, w)
					}
				}
				if strings.Contains(s, "[truncated]") {
					t.Errorf("stack %q is cut", s)
				}
				ctor = ctor || strings.Contains(s, ";_dl_init;")
			}
			if n := partialDrops(r.stderr); n != 0 {
				t.Errorf("%d partial stacks\n%s", n, r.stderr)
			}
			if c.name == "startup-constructor" && !ctor {
				t.Logf("no malloc from a start-up constructor (libstdc++'s emergency pool) on this system: only main's stacks checked")
			}
		})
	}
}

// Under -p the gate holds the process at every later dlopen too: a library
// dlopen'd and dlclose'd in a loop while probee is attached is unwound from
// its first call each round.
func TestLdsoGatePID(t *testing.T) {
	testgate.Root(t)
	lib := fixture(t, "libdlplugin.so")
	target := exec.Command(fixture(t, "dlloop-nofp"), "100000000", "20")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	r := run(t, "", "--unwind", "dwarf", "--uprobe", lib+":plugin_leaf", "-d", "2s", "-p", strconv.Itoa(target.Process.Pid))
	stacks := folded(t, r.stdout)
	if r.code != 0 || total(stacks) < 20 {
		t.Fatalf("exit %d, %d hits\n%s", r.code, total(stacks), r.stderr)
	}
	for s, n := range stacks {
		if !strings.Contains(s, ";main;") || !strings.HasSuffix(s, ";call_plugin;plugin_entry;plugin_leaf") {
			t.Errorf("stack %q (%d) is not complete", s, n)
		}
	}
	if n := partialDrops(r.stderr); n != 0 {
		t.Errorf("%d partial stacks\n%s", n, r.stderr)
	}
	t.Logf("%d hits over %d rounds, all complete", total(stacks), total(stacks)/20)
}
