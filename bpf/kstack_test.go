package bpf

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/probee/probee/internal/testgate"
)

// Kernel stacks are deduplicated by content: thousands of distinct ones
// (CPU samples taken all over the kernel) lose none. A stack trace map of
// the default 16384 buckets loses some from about 200 distinct stacks on,
// and dozens at 1000 (a bucket collision drops the later stack).
func TestManyKernelStacks(t *testing.T) {
	testgate.Root(t)
	s := openSession(t, Options{})
	if err := s.AttachSampling(4000); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	// Kernel work down many paths: directory walks, stats and reads of
	// files, /proc and /sys, pipes, sockets, forks and execs (warm page
	// caches leave fewer paths: 700-1400 distinct stacks in 4 s of the
	// first two alone, on a busy 2-core VM).
	work := exec.CommandContext(ctx, "sh", "-c", "while :; do find /usr /etc -xdev -name x; "+
		"tar cf - /usr/include /usr/share/doc | cat >/dev/null; ls -lR /proc/self /sys/class >/dev/null 2>&1; "+
		"cat /proc/[0-9]*/stat /proc/[0-9]*/maps >/dev/null 2>&1; getent hosts localhost >/dev/null; "+
		"dd if=/dev/zero of=/dev/null bs=1M count=8 2>/dev/null; done")
	work.Start()
	work.Wait()
	s.Detach()
	snap, err := s.Drain(1)
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, c := range snap.Counts {
		if c.Kernel.Len() > 0 {
			distinct[fmt.Sprint(c.Kernel.PCs())] = true
		}
	}
	t.Logf("%d samples, %d distinct kernel stacks, drops %v", snap.Hits[0], len(distinct), snap.Drops)
	for _, cause := range []DropCause{DropKernelStackError, DropKernelStackCollision, DropKernelStackFull} {
		if n := snap.Drops[cause]; n > 0 {
			t.Errorf("%d dropped: %v", n, cause)
		}
	}
	if len(distinct) < 1000 {
		t.Errorf("only %d distinct kernel stacks: the workload no longer exercises the map", len(distinct))
	}
}
