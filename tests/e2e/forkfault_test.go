package e2e

import (
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// A child forked under a 64 KiB frame faults on fresh pages at once,
// before probee has heard of it: the page fault tracepoint runs where
// bpf_find_vma works once per event, and a stack handed over to user
// space carries 28 KiB of stack, too little to get past big. The kernel
// walks such a child with its parent's mappings (bpf/unwind.h
// parent_tgid), also on 5.10, which has no bpf_find_vma: every stack
// under spawn, the parent's and the child's, is complete. Before, 1-14
// of a run's child stacks ended "[truncated];spawn" or "[truncated];big".
// (Start-up stacks are not checked: on 5.10, a library's frames before
// its mapping record was read are cut, as the README says.)
func TestForkedChildFaults(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "forkfault-nofp")
	r := run(t, "", "--tracepoint", "exceptions:page_fault_user", "--", bin, "64")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	st := folded(t, r.stdout)
	var touched uint64
	for s, n := range st {
		if !strings.Contains(s, ";spawn;") {
			continue
		}
		// __libc_start_call_main since glibc 2.34, main's caller before.
		complete := strings.Contains(s, "forkfault-nofp;_start;__libc_start_main;") && strings.Contains(s, ";main;big;spawn;")
		if !complete || strings.Contains(s, "[truncated]") {
			t.Errorf("partial stack (%d): %s", n, s)
		}
		if complete && strings.Contains(s, ";spawn;child_touch;") {
			touched += n
		}
	}
	if touched < 64 {
		t.Errorf("%d complete stacks of the child's faults in child_touch, want at least 64 (one per page):\n%s", touched, foldedLines(st))
	}
}
