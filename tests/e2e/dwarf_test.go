package e2e

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// strategies are the two DWARF walks: tail calls and the inline loop.
var strategies = []struct{ name, flag string }{{"tailcalls", ""}, {"inline", "--no-tail-calls"}}

func dwarfArgs(flag string, args ...string) []string {
	out := []string{"--unwind", "dwarf"}
	if flag != "" {
		out = append(out, flag)
	}
	return append(out, args...)
}

// userDepth is the number of user frames of a combined folded line's stack
// (label and comm are the first two frames; kernel frames end in _[k]).
func userDepth(stack string) int {
	n := 0
	for i, f := range strings.Split(stack, ";") {
		if i >= 2 && !strings.HasSuffix(f, "_[k]") {
			n++
		}
	}
	return n
}

// The no-FP chain main -> a -> b -> c -> leaf, exactly N hits, both walks.
func TestDWARFChainExact(t *testing.T) {
	testgate.Root(t)
	for _, name := range []string{"chain-nofp", "chain-nopie-nofp"} {
		for _, s := range strategies {
			t.Run(name+"/"+s.name, func(t *testing.T) {
				bin := fixture(t, name)
				r := run(t, "", dwarfArgs(s.flag, "--uprobe", bin+":leaf", "--", bin, "5000")...)
				stacks := folded(t, r.stdout)
				if n := total(stacks); n != 5000 || r.code != 0 {
					t.Fatalf("total %d exit %d, want 5000 and 0\n%s", n, r.code, r.stderr)
				}
				for st := range stacks {
					if !strings.HasSuffix(st, ";main;a;b;c;leaf") || strings.Contains(st, "[truncated]") {
						t.Errorf("stack %q does not end in main;a;b;c;leaf", st)
					}
				}
				if !strings.Contains(r.stderr, "no drops") {
					t.Errorf("drops reported:\n%s", r.stderr)
				}
			})
		}
	}
}

// 150-deep recursion: >= 145 frames in uprobe context; the inline walk's
// depth is printed.
func TestDWARFDeepRecursion(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "recurse-nofp")
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			r := run(t, "", dwarfArgs(s.flag, "--uprobe", bin+":leaf", "--", bin, "150", "10")...)
			stacks := folded(t, r.stdout)
			if total(stacks) != 10 {
				t.Fatalf("total %d, want 10\n%s", total(stacks), r.stderr)
			}
			for st := range stacks {
				if d := userDepth(st); d < 145 {
					t.Errorf("%d user frames, want >= 145: %.200s...", d, st)
				}
			}
			if !strings.Contains(r.stderr, "DWARF unwinding: ") {
				t.Errorf("walk depth not printed:\n%s", r.stderr)
			}
			t.Logf("%s", firstLine(r.stderr, "DWARF unwinding"))
		})
	}
}

func firstLine(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// Stacks that cross into other objects, signal frames and dlopen'd code.
func TestDWARFFixtures(t *testing.T) {
	testgate.Root(t)
	cases := []struct {
		name, bin, probe, arg, suffix string
	}{
		{"shared-lib", "uselib-nofp", "libfx.so:fx_leaf", "300", ";main;run;fx_entry;fx_inner;fx_leaf"},
		{"signal", "signal-nofp", "signal-nofp:sig_leaf", "300", ";on_signal;sig_leaf"},
		{"dlopen", "dlmain-nofp", "libdlplugin.so:plugin_leaf", "300", ";main;call_plugin;plugin_entry;plugin_leaf"},
		{"cxx", "cxx", "cxx:regex:^_ZN2ns5Klass6method", "300", "::method"},
		{"rust", "rustfx", "rustfx:regex:inner_fn", "300", "inner_fn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := fixture(t, c.bin)
			probe := fixture(t, strings.SplitN(c.probe, ":", 2)[0]) + ":" + strings.SplitN(c.probe, ":", 2)[1]
			r := run(t, "", dwarfArgs("", "--uprobe", probe, "--", bin, c.arg)...)
			stacks := folded(t, r.stdout)
			if n := total(stacks); n != 300 || r.code != 0 {
				t.Fatalf("total %d exit %d, want 300 and 0\n%s", n, r.code, r.stderr)
			}
			for st := range stacks {
				if !strings.Contains(st, ";main;") && !strings.Contains(st, "::main;") {
					t.Errorf("stack %q does not reach main", st)
				}
				if !strings.Contains(st, c.suffix) || strings.Contains(st, "[truncated]") {
					t.Errorf("stack %q lacks %q or is truncated", st, c.suffix)
				}
			}
			if c.name == "signal" {
				for st := range stacks {
					if !strings.Contains(st, ";main;sig_a;sig_b;") {
						t.Errorf("signal stack %q does not continue below the signal frame", st)
					}
				}
			}
		})
	}
}
