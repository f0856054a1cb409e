package python

import (
	"os"
	"path/filepath"
	"testing"
)

// pyenvLibs are pyenv's shared builds of the versions with a layout, by
// version (this machine's ~/.pyenv/versions).
func pyenvLibs(t *testing.T) map[Version]string {
	t.Helper()
	home, _ := os.UserHomeDir()
	out := map[Version]string{}
	for v := MinVersion; v.Minor <= MaxVersion.Minor; v.Minor++ {
		libs, _ := filepath.Glob(filepath.Join(home, ".pyenv/versions", v.String()+".*", "lib", "libpython"+v.String()+".so.1.0"))
		if len(libs) > 0 {
			out[v] = libs[0]
		}
	}
	if len(out) == 0 {
		t.Skip("no pyenv Pythons in ~/.pyenv/versions")
	}
	return out
}

// The table is what each version's DWARF says.
func TestLayoutsMatchDWARF(t *testing.T) {
	for v, lib := range pyenvLibs(t) {
		want := dwarfLayout(t, lib, v)
		got, ok := tableLayout(v)
		if !ok {
			t.Errorf("%v: no layout in the table", v)
			continue
		}
		if got != want {
			t.Errorf("%v: table\n  %+v\nDWARF of %s\n  %+v", v, got, lib, want)
		}
	}
}
