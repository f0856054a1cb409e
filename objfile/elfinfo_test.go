package objfile

import "testing"

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
