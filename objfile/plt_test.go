package objfile

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// PLT stubs are named function@plt, each at its own address: frames in a
// stub no longer show module+0xOFF.
func TestPLTStubs(t *testing.T) {
	o, err := LoadObject(fixture(t, "libctr-box.so"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		va   uint64
		want string
	}{{0x1030, "box_mid@plt"}, {0x103b, "box_mid@plt"}, {0x1040, "box_leaf@plt"}, {0x1020, ""}} {
		if _, name := o.SymbolAt(c.va); name != c.want {
			t.Errorf("0x%x: %q, want %q", c.va, name, c.want)
		}
	}
	if i := o.FuncAt(0x1030); i >= 0 || len(o.plt) != 2 {
		t.Errorf("stubs must stay out of Funcs (FuncAt %d) and be 2 (got %d)", i, len(o.plt))
	}
}

// objdump is the oracle: the same names at the same addresses as its
// "<name@plt>" labels, for binaries with a .plt (and a .plt.sec, where
// the machine has one).
func TestPLTStubsObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump (binutils) is missing")
	}
	label := regexp.MustCompile(`(?m)^([0-9a-f]+) <([^>+]+@plt)>:$`)
	for _, path := range []string{"/usr/bin/xz", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", fixture(t, "chain-fp")} {
		out, err := exec.Command("objdump", "-d", "-j", ".plt", "-j", ".plt.sec", path).Output()
		if err != nil {
			t.Fatalf("objdump %s: %v", path, err)
		}
		want := map[uint64]string{}
		for _, m := range label.FindAllStringSubmatch(string(out), -1) {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			want[a] = m[2]
		}
		o, err := LoadObject(path, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint64]string{}
		for _, s := range o.plt {
			got[s.Addr] = s.Name
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%s: %d stubs, objdump %d", path, len(got), len(want))
		}
		for a, n := range want {
			if got[a] != n {
				t.Errorf("%s: 0x%x: %q, objdump %q", path, a, got[a], n)
			}
		}
	}
}
