package objfile

import "testing"

// TestFuncAtAlias checks which of several symbols at one address names it.
func TestFuncAtAlias(t *testing.T) {
	o := &Object{Funcs: []Symbol{
		{Name: "_ZN1T9VisitDeclEv", Addr: 0x100, Global: true}, // dropped body: size 0
		{Name: "_ZN1S9SubstDeclEPvS0_S0_", Addr: 0x100, Size: 0x40, Global: true},
		{Name: "__libc_malloc", Addr: 0x200, Size: 0x20, Global: true},
		{Name: "malloc", Addr: 0x200, Size: 0x20, Global: true},
		{Name: "local", Addr: 0x200, Size: 0x20},
		{Name: "label", Addr: 0x300},
	}}
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0x100, "_ZN1S9SubstDeclEPvS0_S0_"},
		{0x13f, "_ZN1S9SubstDeclEPvS0_S0_"},
		{0x210, "malloc"},
		{0x300, "label"},
		{0x301, ""},
	} {
		got := ""
		if i := o.FuncAt(c.addr); i >= 0 {
			got = o.Funcs[i].Name
		}
		if got != c.want {
			t.Errorf("FuncAt(0x%x) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestIsFragment(t *testing.T) {
	for raw, want := range map[string]bool{
		"_Z3foov.cold":   true,
		"_Z3foov.cold.1": true,
		"_RNvCs1_3abc3fooB2_.llvm.5540057329546874339.warm": true,
		"_RNvCs1_3abc3fooB2_.llvm.5540057329546874339.cold": true,
		"_Z3foov.part.0":  true,
		"_Z3foov":         false,
		"_Z3foov.isra.0":  false,
		"warmup":          false,
		"_Z6coldenv":      false,
		"_Z3foov.coldish": false,
	} {
		if got := isFragment(raw); got != want {
			t.Errorf("isFragment(%q) = %v, want %v", raw, got, want)
		}
	}
}
