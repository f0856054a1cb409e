package e2e

import (
	"maps"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// The stacks of processes gone during the run, merged and moved to the
// spill file (PROBEE_SPILL_AT=1: after every merge; trace/fold.go), come
// back whole at the end: the folded output is that of a run keeping
// every process to the end (PROBEE_MERGE_GONE=0). The processes make
// overlapping sets of distinct stacks (100 to 256 of 256), so samples are
// both written and counted again in memory.
func TestSpillGone(t *testing.T) {
	testgate.Root(t)
	bin := fixture(t, "manystacks-fp")
	script := "for n in 100 150 200 256; do " + bin + " $n 8; sleep 0.5; done; sleep 14"
	args := []string{"-v", "--uprobe", bin + ":leaf", "--", "sh", "-c", script}
	envs := []string{"PROBEE_MERGE_GONE=0", "PROBEE_SPILL_AT=1"}
	res := make([]result, len(envs))
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Go(func() { res[i] = runEnv(t, env, args...) })
	}
	wg.Wait()
	kept, spilled := folded(t, res[0].stdout), folded(t, res[1].stdout)
	if res[0].code != 0 || res[1].code != 0 || total(kept) != 100+150+200+256 || !maps.Equal(kept, spilled) {
		t.Errorf("exit %d and %d: %d hits kept, %d spilled, want %d in the same stacks\nkept:\n%s\nspilled:\n%s",
			res[0].code, res[1].code, total(kept), total(spilled), 100+150+200+256, foldedLines(kept), foldedLines(spilled))
	}
	if !strings.Contains(res[1].stderr, "256 distinct kept on disk") {
		t.Errorf("no word of the 256 distinct stacks spilled:\n%s", res[1].stderr)
	}
}

// runEnv is run with env (NAME=VALUE) added to probee's environment.
func runEnv(t *testing.T, env string, args ...string) result {
	t.Helper()
	cmd := exec.Command(probee, args...)
	cmd.Env = append(os.Environ(), env)
	cmd.Dir = t.TempDir()
	isolateMounts(cmd)
	r := runCmd(t, cmd)
	t.Logf("%s probee %s\nexit %d\nstderr:\n%s", env, strings.Join(args, " "), r.code, r.stderr)
	return r
}
