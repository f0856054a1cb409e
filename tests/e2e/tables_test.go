package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// budgetWarnings are the status lines that name --unwind-budget.
func budgetWarnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "--unwind-budget") {
			out = append(out, l)
		}
	}
	return out
}

// A library whose table does not fit a small --unwind-budget (libbigfx.so,
// FP-built, about 290 KiB as a table) is walked without it while the
// program and libc, which fit, are walked by DWARF: one warning names the
// library and the flag, the uprobe at fx_leaf's first instruction gets its
// caller fx_inner from [rsp] (a frame-pointer step there would skip it),
// frame pointers take fx_inner and fx_entry, and DWARF resumes in the
// no-FP program down to _start. Both walks, two processes (one warning);
// with the default budget the table loads and nothing is said.
func TestUnwindBudget(t *testing.T) {
	testgate.Root(t)
	bin, lib := fixture(t, "usebigfx-nofp"), fixture(t, "libbigfx.so")
	// libc's frame below main is named only where libc's local symbols are.
	const start, chain = ";_start;__libc_start_main;", ";main;run;fx_entry;fx_inner;fx_leaf"
	for _, c := range []struct {
		name, walk, budget string
		warned             bool
	}{
		{"small/tailcalls", "", "192K", true},
		{"small/inline", "--no-tail-calls", "192K", true},
		{"default", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Two processes map the library: still one warning.
			args := dwarfArgs(c.walk, "--uprobe", lib+":fx_leaf", "--", "sh", "-c", `"$0" 100; "$0" 200`, bin)
			if c.budget != "" {
				args = append([]string{"--unwind-budget", c.budget}, args...)
			}
			r := run(t, "", args...)
			stacks := folded(t, r.stdout)
			if n := total(stacks); n != 300 || r.code != 0 {
				t.Fatalf("total %d exit %d, want 300 and 0", n, r.code)
			}
			for st := range stacks {
				if !strings.Contains(st, start) || !strings.HasSuffix(st, chain) || strings.Contains(st, "[truncated]") {
					t.Errorf("stack %q, want it to go from %s to %s", st, start, chain)
				}
			}
			warns := budgetWarnings(r.stderr)
			if !c.warned {
				if len(warns) > 0 {
					t.Errorf("warnings with the default budget: %q", warns)
				}
				return
			}
			if len(warns) != 1 || !strings.Contains(warns[0], "warning") || !strings.Contains(warns[0], "libbigfx.so") ||
				strings.Contains(warns[0], "usebigfx-nofp") || strings.Contains(warns[0], "libc") {
				t.Errorf("budget warnings %q, want one, naming libbigfx.so alone", warns)
			}
		})
	}
}

// clangSource is a small C++ file whose compilation grows many LLVM
// small vectors (std::regex, std::map and iostreams instantiate a lot).
const clangSource = `#include <iostream>
#include <map>
#include <regex>
#include <string>

int main(int argc, char **argv)
{
	std::map<std::string, int> counts;
	std::regex word("[a-z]+");
	for (int i = 1; i < argc; i++) {
		std::string s = argv[i];
		for (std::sregex_iterator it(s.begin(), s.end(), word), end; it != end; ++it)
			counts[it->str()]++;
	}
	for (const auto &w : counts)
		std::cout << w.first << ' ' << w.second << '\n';
	return 0;
}
`

// clang++ maps libLLVM, libclang-cpp, libstdc++ and libc (7 MB of tables,
// beyond the old fixed 4 MiB): with the default budget every table loads,
// and at most 1% of the stacks at a uprobe in libLLVM are truncated.
func TestClangUprobe(t *testing.T) {
	testgate.Root(t)
	clang, err := exec.LookPath("clang++")
	if err != nil {
		if testgate.Required() {
			t.Fatalf("clang++ is missing: run tests/install-deps.sh")
		}
		t.Skip("clang++ is missing: run tests/install-deps.sh")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "t.cpp")
	if err := os.WriteFile(src, []byte(clangSource), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "--uprobe", "libLLVM-14:demangle:llvm::SmallVectorBase<*>::grow_pod*", "--", clang, "-O2", "-c", src, "-o", filepath.Join(dir, "t.o"))
	stacks := folded(t, r.stdout)
	var truncated uint64
	for st, n := range stacks {
		if strings.Contains(st, "[truncated]") {
			truncated += n
		}
	}
	n := total(stacks)
	if r.code != 0 || n < 1000 {
		t.Fatalf("exit %d, %d stacks; want 0 and at least 1000", r.code, n)
	}
	if truncated*100 > n {
		t.Errorf("%d of %d stacks truncated, want at most 1%%", truncated, n)
	}
	if strings.Contains(r.stderr, "maps are full") || len(budgetWarnings(r.stderr)) > 0 || strings.Contains(r.stderr, "does not fit") {
		t.Errorf("a table was not loaded:\n%s", r.stderr)
	}
	t.Logf("%d of %d stacks truncated; %s", truncated, n, firstLine(r.stderr, "unwind tables:"))
}
