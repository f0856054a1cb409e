package unwind

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/gdbsnap"
	"github.com/probee/probee/internal/procmaps"
	"github.com/probee/probee/internal/testgate"
)

type gdbSnapshot struct {
	regs  Regs
	bt    []string // function names, innermost first, up to main
	maps  []procmaps.Mapping
	stack StackCopy
}

func runGDB(t *testing.T, bin, brk string, args ...string) *gdbSnapshot {
	g := gdbsnap.Take(t, bin, brk, args...)
	maps, err := ParseMaps(strings.NewReader(g.Maps))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gdb bt:\n%s", g.Backtrace)
	return &gdbSnapshot{
		regs:  Regs{RIP: g.RIP, RSP: g.RSP, RBP: g.RBP},
		bt:    g.Frames(),
		maps:  maps,
		stack: StackCopy{Addr: g.RSP, Data: g.Stack},
	}
}

// frameName names f with the ELF symbols of its module.
func frameName(t *testing.T, syms *gdbsnap.Symbols, mods []Module, f Step) string {
	if f.Module < 0 {
		return "?"
	}
	m := &mods[f.Module]
	pc := f.PC - m.Bias
	if !f.Exact {
		pc-- // a return address: look up the call
	}
	return syms.FuncName(t, m.Path, pc)
}

func TestUnwindMatchesGDB(t *testing.T) {
	testgate.Root(t)
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed: run tests/install-deps.sh")
	}
	tests := []struct {
		bin, brk string
		args     []string
	}{
		{"chain-nofp", "leaf", []string{"1"}},
		{"chain-nopie-nofp", "leaf", []string{"1"}},
		{"recurse-nofp", "leaf", []string{"20", "1"}},
		{"uselib-nofp", "fx_leaf", []string{"1"}},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			bin := testgate.Fixture(t, filepath.Join(fixtureDir, tt.bin))
			abs, _ := filepath.Abs(bin)
			snap := runGDB(t, abs, tt.brk, tt.args...)
			checkAgainstGDB(t, snap)
		})
	}
}

func checkAgainstGDB(t *testing.T, snap *gdbSnapshot) {
	mods, errs := NewCache().Modules(snap.maps, nil)
	for _, err := range errs {
		t.Logf("module: %v", err)
	}
	frames, stop := Unwind(snap.regs, snap.stack, mods, 512)
	var syms gdbsnap.Symbols
	var names []string
	for _, f := range frames {
		names = append(names, frameName(t, &syms, mods, f))
	}
	t.Logf("ours (%s): %s", stop, strings.Join(names, " <- "))
	if stop != StopEndOfStack {
		t.Errorf("unwind stopped with %q, want the end of the stack", stop)
	}
	got := names
	for i, n := range names {
		if n == "main" {
			got = names[:i+1]
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(snap.bt, ",") {
		t.Errorf("frames differ from gdb:\n ours %v\n gdb  %v", got, snap.bt)
	}
}
