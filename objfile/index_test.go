package objfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, ix *Index, p string) *Object {
	t.Helper()
	o, err := ix.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Links to one file share one read (symbols and DWARF) but keep their
// own paths; a copy with the same build-id is read on its own (a copy's
// bytes may differ: build-ids are not trusted alone); a file rebuilt at
// the same path is read again.
func TestIndexSharesByIdentity(t *testing.T) {
	inline, chain := fixture(t, "inline"), fixture(t, "chain-nofp")
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")
	copyFile(t, inline, a)
	if err := os.Link(a, b); err != nil {
		t.Fatal(err)
	}
	copyFile(t, inline, c)
	ix := NewIndex("")
	oa, ob, oc := load(t, ix, a), load(t, ix, b), load(t, ix, c)
	if oa.Path != a || ob.Path != b {
		t.Errorf("paths %q and %q, want %q and %q", oa.Path, ob.Path, a, b)
	}
	if len(oa.Funcs) == 0 || &oa.Funcs[0] != &ob.Funcs[0] || oa.dwarf != ob.dwarf {
		t.Error("the links were read twice")
	}
	if oc.BuildID != oa.BuildID || &oc.Funcs[0] == &oa.Funcs[0] || oc.dwarf == oa.dwarf {
		t.Error("a copy with the same build-id shared the original's read")
	}
	if again := load(t, ix, b); again != ob {
		t.Error("a second Load of one path gave another object")
	}
	copyFile(t, chain, a)
	if re := load(t, ix, a); re.BuildID == oa.BuildID || re.Path != a {
		t.Errorf("rebuilt %s: build-id %s, path %s: the old object was kept", a, re.BuildID, re.Path)
	}
}

// The symbols held stay within MaxSymbols: past it, a new file is not
// read (its frames are named by file and offset), one warning says so.
func TestIndexSymbolBudget(t *testing.T) {
	old := MaxSymbols
	MaxSymbols = 1
	defer func() { MaxSymbols = old }()
	ix := NewIndex("")
	if _, err := ix.Load(fixture(t, "inline")); err != nil {
		t.Fatal(err)
	}
	_, err := ix.Load(fixture(t, "chain-nofp"))
	if !errors.Is(err, safeelf.ErrBudget) || !strings.Contains(err.Error(), "MaxSymbols") {
		t.Errorf("past the budget: %v, want ErrBudget", err)
	}
}

// An object read but not in a mapping set yet (a snapshot between its
// load and its merge) survives the first sweep that finds it unused.
func TestIndexSweepSparesNewObjects(t *testing.T) {
	ix := NewIndex("")
	o, err := ix.Load(fixture(t, "cxx"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		ix.Sweep(nil)
		if n := ix.objs.Len(); n != want {
			t.Errorf("after sweep %d: %d objects, want %d", i+1, n, want)
		}
	}
	if again, _ := ix.Load(fixture(t, "cxx")); again == o || again.Path != o.Path {
		t.Errorf("a file evicted came back as the same object or not at all")
	}
}
