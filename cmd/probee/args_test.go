package main

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/trace"
)

// Every order of --list-probes, its specs and the other flags parses to
// the same listing; what follows -- is the command's, flags included.
func TestListProbesArgs(t *testing.T) {
	type want struct {
		specs   []string
		json    bool
		verbose bool
		pid     int
		command []string
	}
	spec, spec2 := "libc:malloc*", "libc:free"
	cases := []struct {
		args []string
		want want
	}{
		{[]string{"--list-probes", spec}, want{specs: []string{spec}}},
		{[]string{"-l", spec}, want{specs: []string{spec}}},
		{[]string{"--list-probes", "--json", spec}, want{specs: []string{spec}, json: true}},
		{[]string{"--list-probes", spec, "--json"}, want{specs: []string{spec}, json: true}},
		{[]string{"--json", "--list-probes", spec}, want{specs: []string{spec}, json: true}},
		{[]string{spec, "--list-probes", "--json"}, want{specs: []string{spec}, json: true}},
		{[]string{"--list-probes", "-v", spec}, want{specs: []string{spec}, verbose: true}},
		{[]string{"--list-probes", spec, "-v"}, want{specs: []string{spec}, verbose: true}},
		{[]string{"-v", "-l", spec}, want{specs: []string{spec}, verbose: true}},
		{[]string{"-l", "--verbose", spec}, want{specs: []string{spec}, verbose: true}},
		{[]string{"-l", spec, spec2}, want{specs: []string{spec, spec2}}},
		{[]string{"-l", spec, "-v", spec2}, want{specs: []string{spec, spec2}, verbose: true}},
		{[]string{"-l", "--json", spec, spec2, "-v"}, want{specs: []string{spec, spec2}, json: true, verbose: true}},
		{[]string{"-l", spec, "-p", "42"}, want{specs: []string{spec}, pid: 42}},
		{[]string{"-p", "42", "-l", spec, spec2}, want{specs: []string{spec, spec2}, pid: 42}},
		{[]string{"-l", "-p", "42", spec, "--json"}, want{specs: []string{spec}, pid: 42, json: true}},
		{[]string{"-l", spec, "--", "./app", "--json", "-v"}, want{specs: []string{spec}, command: []string{"./app", "--json", "-v"}}},
		{[]string{"-l", "--json", spec, spec2, "--", "./app", "--", "-l"}, want{specs: []string{spec, spec2}, json: true, command: []string{"./app", "--", "-l"}}},
		{[]string{"--list-probes=" + spec}, want{specs: []string{spec}}},
		{[]string{"--list-probes=" + spec, "--json"}, want{specs: []string{spec}, json: true}},
		{[]string{"-l=" + spec, spec2}, want{specs: []string{spec, spec2}}},
		{[]string{"-l", "-", "--json"}, want{specs: []string{"-"}, json: true}}, // "-" is an argument, as for the flag package
	}
	for _, c := range cases {
		cfg, err := parseArgs(c.args, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		got := want{cfg.listSpecs, cfg.json, cfg.verbose, cfg.pid, cfg.command}
		if !cfg.list || !slices.Equal(got.specs, c.want.specs) || got.json != c.want.json || got.verbose != c.want.verbose ||
			got.pid != c.want.pid || !slices.Equal(got.command, c.want.command) {
			t.Errorf("%q: list %v, got %+v, want %+v", c.args, cfg.list, got, c.want)
		}
	}
}

// Command lines that cannot list: exit 2 with a message naming the fix.
func TestListProbesArgErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--list-probes"}, "--list-probes needs a SPEC to list, e.g. probee --list-probes 'libc:malloc*'"},
		{[]string{"-l", "--json", "-v"}, "--list-probes needs a SPEC"},
		{[]string{"-l", "--", "./app", "libc:malloc"}, "--list-probes needs a SPEC"},
		{[]string{"libc:malloc"}, `unexpected argument "libc:malloc": give a probe with its flag, e.g. probee --uprobe 'libc:malloc' -- CMD (or list its targets: probee --list-probes 'libc:malloc')`},
		{[]string{"--json", "libc:malloc"}, `unexpected argument "libc:malloc"`},
		{[]string{"--uprobe", "malloc", "./app", "--json", "-v"}, `unexpected argument "./app": put the command to trace after --, e.g. probee --uprobe malloc -- ./app --json -v (or`},
		{[]string{"--uprobe", "malloc", "./app", "-x", "--", "y"}, "e.g. probee --uprobe malloc -- ./app -x (or"},
		{[]string{"--uprobe", "malloc", "./app", "-d"}, "e.g. probee --uprobe malloc -- ./app -d (or"},
		{[]string{"-d", "--uprobe", "malloc", "./app"}, "-d needs a value, but --uprobe follows it"},
		{[]string{"--uprobe", "malloc", "ls", "-l"}, "--list-probes only lists: drop the --uprobe/--kprobe/--tracepoint/--usdt/--sample/--off-cpu/--wall flags (a command to trace goes after --)"},
		{[]string{"-l", "libc:malloc", "-p", "1", "--", "true"}, "not both"},
		{[]string{"-l", "malloc+", "--json"}, "--list-probes 'malloc+': 1:8: missing offset after '+'"},
		{[]string{"-l", "malloc", "-x"}, "unknown flag -x"},
		{[]string{"--uprobe", "--json", "libc:malloc"}, "--uprobe needs a value, but --json follows it: give the value right after --uprobe"},
		{[]string{"-o", "-v", "--uprobe", "malloc"}, "-o needs a value, but -v follows it"},
		{[]string{"-l", "libc:malloc", "-p"}, "-p needs a value (see probee --help)"},
		{[]string{"--uprobe", "--", "./app"}, "--uprobe needs a value (see probee --help)"},
		{[]string{"-l", "libc:malloc", "---json"}, "bad flag syntax: ---json"},
	}
	for _, c := range cases {
		out, errs, code := probee(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("probee %q: exit %d, stderr %q, stdout %q; want exit 2 and %q", c.args, code, errs, out, c.want)
		}
	}
}

// --group-by takes "container", and only when tracing.
func TestGroupByArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"--sample", "--group-by", "container"}, io.Discard)
	if err != nil || cfg.groupBy != groupContainer {
		t.Errorf("--group-by container: %+v, %v", cfg, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "--group-by", "pod"}, `invalid value "pod" for --group-by: want container`},
		{[]string{"-l", "libc:malloc", "--group-by", "container"}, "--group-by only applies to tracing, not to --list-probes"},
	} {
		out, errs, code := probee(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("probee %q: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// Values that start with '-' but are not probee flags stay values.
func TestDashValues(t *testing.T) {
	_, errs, code := probee(t, "--uprobe", "malloc", "--interval", "-2s")
	if code != 2 || !strings.Contains(errs, "--interval -2s: want 0") {
		t.Errorf("--interval -2s: exit %d, %q", code, errs)
	}
	_, errs, code = probee(t, "-p", "-1", "--uprobe", "malloc")
	if code != 2 || !strings.Contains(errs, `invalid value "-1" for -p: invalid pid "-1"`) {
		t.Errorf("-p -1: exit %d, %q", code, errs)
	}
}

// The listing of a fixture is the same in every flag order; several specs
// list their union, sorted, each target once.
func TestListProbesOrders(t *testing.T) {
	bin, _ := filepath.Abs(testgate.Fixture(t, "../../tests/fixtures/bin/chain-fp"))
	foo, leaf := bin+":regex:^foo_", bin+":leaf"
	list := func(args ...string) string {
		t.Helper()
		out, errs, code := probee(t, args...)
		if code != 0 {
			t.Fatalf("probee %q: exit %d, stderr %q", args, code, errs)
		}
		return out
	}
	plain := "uprobe:" + bin + ":foo_one\nuprobe:" + bin + ":foo_two\nuprobe:" + bin + ":leaf\n"
	for _, args := range [][]string{
		{"--list-probes", foo, leaf},
		{"-l", leaf, foo},
		{"-l", foo, leaf, foo, bin + ":foo_one"},
		{"--list-probes=" + leaf, foo},
	} {
		if got := list(args...); got != plain {
			t.Errorf("%q:\n%s\nwant:\n%s", args, got, plain)
		}
	}
	orders := func(flag string, specs ...string) [][]string {
		return [][]string{
			append([]string{"--list-probes", flag}, specs...),
			append(append([]string{"--list-probes"}, specs...), flag),
			append([]string{flag, "-l"}, specs...),
			{"-l", specs[0], flag, specs[len(specs)-1]},
		}
	}
	if got, want := list("-l", leaf, "--", "true", "--json"), "uprobe:"+bin+":leaf\n"; got != want {
		t.Errorf("-l SPEC -- true --json: %q, want %q (--json is the command's)", got, want)
	}
	for flag, mark := range map[string]string{"--json": `{"kind":"uprobe",`, "-v": "  addr=0x"} {
		all := orders(flag, foo, leaf)
		first := list(all[0]...)
		lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
		if len(lines) != 3 || !strings.Contains(first, "foo_one") || !strings.Contains(first, "leaf") ||
			slices.ContainsFunc(lines, func(l string) bool { return !strings.Contains(l, mark) }) {
			t.Errorf("%q: %q is not a %s listing of foo_one, foo_two and leaf", all[0], first, flag)
		}
		for _, args := range all[1:] {
			if got := list(args...); got != first {
				t.Errorf("%q:\n%s\ndiffers from %q:\n%s", args, got, all[0], first)
			}
		}
	}
}

// --unwind: auto unless given (trace.UnwindMode parses the values).
func TestUnwindFlag(t *testing.T) {
	cfg, err := parseArgs([]string{"--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwind != trace.UnwindAuto {
		t.Errorf("default --unwind: %v, %v; want auto", cfg.unwind, err)
	}
	cfg, err = parseArgs([]string{"--unwind", "fp", "--uprobe", "malloc"}, io.Discard)
	if err != nil || cfg.unwind != trace.UnwindFP {
		t.Errorf("--unwind fp: %v, %v", cfg.unwind, err)
	}
}
