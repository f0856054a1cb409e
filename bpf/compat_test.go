package bpf

import "testing"

func TestParseCompat(t *testing.T) {
	tests := []struct {
		in   string
		want Compat
		err  string
	}{
		{"", Compat{}, ""},
		{"legacy", Compat{Legacy: true}, ""},
		{"legacy,no-cookies, no-task-regs,prealloc", Compat{Legacy: true, NoCookies: true, NoTaskRegs: true, Prealloc: true}, ""},
		{"no-cookie", Compat{}, `unknown compat switch "no-cookie": want legacy, no-cookies, no-task-regs or prealloc`},
	}
	for _, tt := range tests {
		got, err := ParseCompat(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseCompat(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCompat(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// Both builds hold the same programs and maps: the session loads either
// into the same objects.
func TestLegacySpecMatches(t *testing.T) {
	cur, err := loadProbee()
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := loadProbeeLegacy()
	if err != nil {
		t.Fatal(err)
	}
	for name := range cur.Programs {
		if legacy.Programs[name] == nil {
			t.Errorf("program %s missing from the legacy build", name)
		}
	}
	for name, m := range cur.Maps {
		l := legacy.Maps[name]
		if l == nil {
			t.Errorf("map %s missing from the legacy build", name)
			continue
		}
		if l.Type != m.Type || l.KeySize != m.KeySize || l.ValueSize != m.ValueSize {
			t.Errorf("map %s differs: %v/%d/%d in the legacy build, %v/%d/%d", name, l.Type, l.KeySize, l.ValueSize, m.Type, m.KeySize, m.ValueSize)
		}
	}
	for _, v := range []string{"have_cookie", "fixed_cookie", "have_task_regs"} {
		if cur.Variables[v] == nil || legacy.Variables[v] == nil {
			t.Errorf("variable %s missing", v)
		}
	}
}
