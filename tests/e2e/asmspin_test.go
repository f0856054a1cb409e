package e2e

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// Samples in assembly without CFI, and in C called from it, unwind
// through the stack-height rules probee derives from the code
// (unwind/stackheight.go): asm_outer keeps its frame's address in rbp
// after saving r15 above it and aligns rsp (a frame-pointer walk takes
// r15 for the return address), and the function after it, which has no
// symbol of its own, keeps no frame pointer. Every sample in them reaches
// _start through main. Before, every one of them was cut
// ("[truncated];0x7f...;asm_outer").
func TestSampleAssemblyWithoutCFI(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "asmspin-nofp")
	r := run(t, "", "--sample", "-F", "499", "--", bin, "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	const full = "sample;asmspin-nofp;_start;__libc_start_main;"
	leaves := map[string]uint64{}
	var asm uint64
	st := folded(t, r.stdout)
	for s, n := range st {
		if !strings.Contains(s, ";asm_outer") {
			continue
		}
		asm += n
		if !strings.HasPrefix(s, full) || !strings.Contains(s, ";main;asm_outer") || strings.Contains(s, "[truncated]") {
			t.Errorf("partial stack (%d): %s", n, s)
			continue
		}
		for _, leaf := range []string{";main;asm_outer", ";asm_outer;asm_outer", ";asm_outer;c_leaf"} {
			if strings.HasSuffix(s, leaf) {
				leaves[leaf] += n
			}
		}
	}
	t.Logf("%d samples under asm_outer; complete, by leaf: %v", asm, leaves)
	if asm < 100 {
		t.Errorf("%d samples under asm_outer, want >= 100:\n%s", asm, r.stderr)
	}
	// Samples land in each function: the rules hold mid-function too.
	for _, leaf := range []string{";main;asm_outer", ";asm_outer;asm_outer", ";asm_outer;c_leaf"} {
		if leaves[leaf] < 10 {
			t.Errorf("%d complete samples ending %q, want >= 10:\n%s", leaves[leaf], leaf, foldedLines(st))
		}
	}
}
