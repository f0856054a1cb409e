package e2e

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/probee/probee/bpf"
	"github.com/probee/probee/internal/gdbsnap"
	"github.com/probee/probee/internal/testgate"
	"github.com/probee/probee/unwind"
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
					if !strings.Contains(st, ";__restore_rt;on_signal;") { // libc's trampoline, unnamed in its .dynsym
						t.Errorf("signal stack %q does not name the signal frame __restore_rt", st)
					}
				}
			}
		})
	}
}

// A uretprobe on leaf fires in c after leaf returned (the trampoline has
// restored the real return address); a uretprobe on c pending while leaf's
// uprobe fires puts the trampoline's address in leaf's stack, which the walk
// must replace with c's real return address. Both walks.
func TestDWARFUretprobe(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "chain-nofp")
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			r := run(t, "", dwarfArgs(s.flag, "-e", "uretprobe:"+bin+":leaf", "--", bin, "3000")...)
			wantStacks(t, r, map[string]string{"uretprobe:" + bin + ":leaf": ";main;a;b;c"}, 3000)
			r = run(t, "", dwarfArgs(s.flag, "-e", "uretprobe:"+bin+":c", "-e", "uprobe:"+bin+":leaf", "--", bin, "3000")...)
			wantStacks(t, r, map[string]string{
				"uretprobe:" + bin + ":c": ";main;a;b",
				"uprobe:" + bin + ":leaf": ";main;a;b;c;leaf",
			}, 3000)
		})
	}
}

// wantStacks checks that every probe (label -> stack suffix) got exactly n
// hits, all with the suffix and none truncated.
func wantStacks(t *testing.T, r result, suffix map[string]string, n uint64) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := map[string]uint64{}
	for st, c := range folded(t, r.stdout) {
		label := strings.SplitN(st, ";", 2)[0]
		got[label] += c
		if want, ok := suffix[label]; !ok || !strings.HasSuffix(st, want) || strings.Contains(st, "[truncated]") {
			t.Errorf("stack %q (%d) does not end in %q", st, c, want)
		}
	}
	for label := range suffix {
		if got[label] != n {
			t.Errorf("%s: %d hits, want %d\n%s", label, got[label], n, r.stderr)
		}
	}
}

// The kernel's DWARF stacks name the same functions, from main to the leaf,
// as the reference unwinder (unwind.Unwind) walking a gdb snapshot of the
// same fixture stopped in the same function.
func TestDWARFMatchesReferenceUnwinder(t *testing.T) {
	testgate.Root(t)
	if _, err := exec.LookPath("gdb"); err != nil {
		t.Skip("gdb not installed: run tests/install-deps.sh")
	}
	// gdb stops the first call (args); probee traces 300 (probeArgs), all
	// with the same stack.
	cases := []struct {
		bin, lib, fn    string
		args, probeArgs []string
	}{
		{"chain-nofp", "", "leaf", []string{"1"}, []string{"300"}},
		{"recurse-nofp", "", "leaf", []string{"40", "1"}, []string{"40", "300"}},
		{"uselib-nofp", "libfx.so", "fx_leaf", []string{"1"}, []string{"300"}},
	}
	for _, c := range cases {
		t.Run(c.bin, func(t *testing.T) {
			bin, probed := fixture(t, c.bin), fixture(t, c.bin)
			if c.lib != "" {
				probed = fixture(t, c.lib)
			}
			want := referenceStack(t, bin, c.fn, c.args)
			for _, s := range strategies {
				r := run(t, "", dwarfArgs(s.flag, append([]string{"--uprobe", probed + ":" + c.fn, "--", bin}, c.probeArgs...)...)...)
				stacks := folded(t, r.stdout)
				if len(stacks) != 1 || r.code != 0 {
					t.Fatalf("%s: %d stacks, exit %d, want 1 and 0\n%s", s.name, len(stacks), r.code, r.stderr)
				}
				for st := range stacks {
					if got := fromMain(strings.Split(st, ";")); !slices.Equal(got, want) {
						t.Errorf("%s: probee and the reference unwinder differ:\n probee    %v\n reference %v", s.name, got, want)
					}
				}
			}
		})
	}
}

// fromMain is frames (root first) from main on, or nil without main.
func fromMain(frames []string) []string {
	if i := slices.Index(frames, "main"); i >= 0 {
		return frames[i:]
	}
	return nil
}

// referenceStack is the function names (root first, from main) that
// unwind.Unwind gives for bin stopped at fn by gdb.
func referenceStack(t *testing.T, bin, fn string, args []string) []string {
	t.Helper()
	snap := gdbsnap.Take(t, bin, fn, args...)
	maps, err := unwind.ParseMaps(strings.NewReader(snap.Maps))
	if err != nil {
		t.Fatal(err)
	}
	mods, _ := unwind.NewCache().Modules(maps, nil)
	regs := unwind.Regs{RIP: snap.RIP, RSP: snap.RSP, RBP: snap.RBP}
	frames, stop := unwind.Unwind(regs, unwind.StackCopy{Addr: regs.RSP, Data: snap.Stack}, mods, 512)
	var syms gdbsnap.Symbols
	var names []string
	for _, f := range frames {
		names = append(names, symbolName(t, &syms, mods, f))
	}
	slices.Reverse(names)
	t.Logf("reference unwinder (%s): %s", stop, strings.Join(names, ";"))
	if stop != unwind.StopEndOfStack {
		t.Errorf("reference unwind stopped with %q, want the end of the stack", stop)
	}
	return fromMain(names)
}

// symbolName names a frame's function from its module's ELF symbols.
func symbolName(t *testing.T, syms *gdbsnap.Symbols, mods []unwind.Module, f unwind.Step) string {
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

// ld.so's lazy-binding trampoline (_dl_runtime_resolve_xsavec) aligns rsp
// down for the state it saves and keeps its frame's address in rbx: its
// CFA is rbx+24. With LD_BIND_NOT=1 every malloc and free call goes
// through it and _dl_fixup's symbol lookup, where most samples land; the
// walk tracks where each frame saved rbx, and every stack goes on through
// the trampoline to _start. Before, 36 of 41 samples ended
// "[truncated];_dl_runtime_resolve_xsavec".
func TestLazyBindingTrampoline(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "mallocbench-nofp")
	r := run(t, "", "--sample", "-F", "999", "--", "env", "LD_BIND_NOT=1", bin, "2000000")
	const chain = ";_start;__libc_start_main;__libc_start_call_main;main;work;do_alloc;"
	var all, ldso, through uint64
	cut := map[string]uint64{}
	for s, n := range folded(t, r.stdout) {
		if !strings.HasPrefix(s, "sample;mallocbench-nof;") {
			continue
		}
		all += n
		i := strings.Index(s, chain)
		inLdso := i >= 0 && (strings.Contains(s[i:], ";_dl_") || strings.Contains(s[i:], ";ld-linux"))
		switch {
		case strings.Contains(s, "[truncated]"):
			cut[s] = n
		case inLdso:
			through += n
		}
		if inLdso || strings.Contains(s, "_dl_runtime_resolve") {
			ldso += n
		}
	}
	t.Logf("%d samples, %d in ld.so's lazy binding, %d of them complete", all, ldso, through)
	if r.code != 0 || ldso < 100 || len(cut) > 0 {
		t.Errorf("exit %d: %d samples in lazy binding (want >= 100), %d complete; cut:\n%s",
			r.code, ldso, through, foldedLines(cut))
	}
}

// A probe inside a stack probe loop (-fstack-clash-protection; LLVM's
// inline probes, as in rustc's run_compiler closure, are alike), where the
// CFI keeps the CFA in r11 while rsp walks down the new 1 MiB frame page
// by page: every stack is complete to _start, its first frame's CFA taken
// from the interrupted r11. Before, that rule was unsupported and each
// stack was cut at the probed frame.
func TestStackProbeLoop(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "bigframe-nofp")
	label := fmt.Sprintf("%s:big+%#x", bin, probeLoopOffset(t, bin, "big"))
	for _, s := range strategies {
		t.Run(s.name, func(t *testing.T) {
			r := run(t, t.TempDir(), dwarfArgs(s.flag, "--uprobe", label, "--", bin, "4")...)
			st := folded(t, r.stdout)
			want := label + ";bigframe-nofp;_start;__libc_start_main;__libc_start_call_main;main;big"
			if r.code != 0 || st[want] != 4*256 || total(st) != 4*256 {
				t.Errorf("exit %d, %d of %d stacks complete, want all of 1024 (4 calls, 256 pages each):\n%s",
					r.code, st[want], total(st), r.stdout)
			}
		})
	}
}

// probeLoopOffset is the offset in function fn of the first instruction
// whose rule keeps the CFA in another register than rsp, rbp or rbx.
func probeLoopOffset(t *testing.T, bin, fn string) uint64 {
	t.Helper()
	tab, err := unwind.BuildFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name != fn {
			continue
		}
		for pc := s.Value; pc < s.Value+s.Size; pc++ {
			if r, ok := tab.Lookup(pc); ok && r.CFA == unwind.CFAReg {
				return pc - s.Value
			}
		}
	}
	t.Fatalf("%s: no CFA kept in another register in %s", bin, fn)
	return 0
}

// A return address in the heap or in the thread's own stack is no frame:
// the walk stops before it (cut, counted partial), where it was walked as
// JIT code by frame pointers and kept as a bare address (a signal frame
// sampled while rt_sigreturn restored the registers once gave sh such a
// root). badret-nofp enters target with a heap address, or with "thread"
// the address of a second thread's local (an anonymous mapping, as JIT
// code is, but the one holding the stack pointer), as its return address.
func TestHeapReturnAddress(t *testing.T) {
	testgate.Root(t)
	if !bpf.HaveFindVMA() {
		testgate.Missing(t, "bpf_find_vma", "without it a pc outside the process's known mappings is kept as a bare address")
	}
	bin := fixture(t, "badret-nofp")
	for _, where := range []string{"heap", "thread"} {
		t.Run(where, func(t *testing.T) {
			args := []string{"--uprobe", bin + ":target", "--", bin, "50"}
			if where == "thread" {
				args = append(args, "thread")
			}
			stacks, r := traceFolded(t, args...)
			want := bin + ":target;badret-nofp;[truncated];target"
			if stacks[want] != 50 || len(stacks) != 1 {
				t.Errorf("stacks %v, want %q 50 times", stacks, want)
			}
			if n := partialStacks(r.stderr); n != 50 {
				t.Errorf("%d partial stacks reported, want 50:\n%s", n, r.stderr)
			}
		})
	}
}
