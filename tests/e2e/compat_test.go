package e2e

import (
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// fallbackTests are the captures whose exact results must hold on the
// oldest kernel of the matrix (5.10, make vmtest): with PROBEE_COMPAT they
// run the same fallbacks here. The legacy object (no callbacks, no BTF task
// pointer, no cmpxchg), one program per cookie, the user registers found
// on the task's kernel stack and preallocated maps.
var fallbackTests = []struct {
	name string
	test func(*testing.T)
}{
	{"UprobeChainExact", TestUprobeChainExact},
	{"TwoProbesPerProbeFiles", TestTwoProbesPerProbeFiles},
	{"TracepointUserAndKernel", TestTracepointUserAndKernel},
	{"DWARFChainExact", TestDWARFChainExact},
	{"SampleSpinFullChain", TestSampleSpinFullChain},
	{"LatencyCallers", TestLatencyCallers},
	{"LdsoGate", TestLdsoGate},
}

func TestFallbacks(t *testing.T) {
	testgate.Root(t)
	t.Setenv("PROBEE_COMPAT", "legacy,no-cookies,no-task-regs,prealloc")
	for _, ft := range fallbackTests {
		t.Run(ft.name, ft.test)
	}
}
