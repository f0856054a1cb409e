package resolver

import (
	"testing"

	"github.com/probee/probee/internal/testgate"
)

func TestIsGoBinary(t *testing.T) {
	for _, c := range []struct {
		name  string
		goBin bool
	}{{"chain-fp", false}, {"chain-nopie-nofp", false}, {"gofx", true}} {
		path := testgate.Fixture(t, "../tests/fixtures/bin/"+c.name)
		if IsGoBinary(path) != c.goBin {
			t.Errorf("%s: IsGoBinary = %v", c.name, !c.goBin)
		}
	}
}

// ld.so exports its debugger interface; a program does not.
func TestFindLdsoDebug(t *testing.T) {
	d, err := FindLdsoDebug("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Skipf("no glibc ld.so here: %v", err)
	}
	if d.StateAddr == 0 || d.RDebugAddr == 0 || d.StateOffset == 0 {
		t.Errorf("ld.so debug interface = %+v, want all set", d)
	}
	if _, err := FindLdsoDebug(fixture(t, "chain-fp")); err == nil {
		t.Error("chain-fp: no error, want no _dl_debug_state")
	}
}
