package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Symlinks on the way to a file are recreated; the file lands at its real path.
func TestHostPathSymlinks(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "usr/lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "usr/lib/real.so"), []byte("x"), 0o644)
	os.Symlink("usr/lib", filepath.Join(dir, "lib"))
	os.Symlink("real.so", filepath.Join(dir, "usr/lib/alias.so"))
	im := newImage()
	real, err := im.hostPath(filepath.Join(dir, "lib/alias.so"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "usr/lib/real.so"); real != want {
		t.Errorf("real path %s, want %s", real, want)
	}
	types := map[string]uint32{}
	for i, e := range im.entries {
		types[e.name] = e.mode & 0o170000
		for _, later := range im.entries[i+1:] {
			if strings.HasPrefix(e.name, later.name+"/") {
				t.Errorf("%s comes before its directory %s", e.name, later.name)
			}
		}
	}
	rel := dir[1:]
	for name, typ := range map[string]uint32{rel + "/lib": modeSymlink, rel + "/usr/lib/alias.so": modeSymlink,
		rel + "/usr/lib/real.so": modeFile, rel + "/usr/lib": modeDir, "dev/console": modeChar} {
		if types[name] != typ {
			t.Errorf("%s: type %o, want %o (have %v)", name, types[name], typ, sortedNames(im.entries))
		}
	}
}

// The host's /bin/sh needs the loader and libc.
func TestElfDepsOfShell(t *testing.T) {
	deps, err := elfDeps("/bin/sh", "/bin")
	if err != nil {
		t.Skipf("no dynamically linked /bin/sh here: %v", err)
	}
	if !slices.ContainsFunc(deps, func(d string) bool { return strings.Contains(d, "ld-linux") }) ||
		!slices.ContainsFunc(deps, func(d string) bool { return strings.HasSuffix(d, "/libc.so.6") }) {
		t.Errorf("deps of /bin/sh %v lack the loader or libc", deps)
	}
}

// depsOf must not panic on hostile ELF files.
func FuzzDepsOf(f *testing.F) {
	if b, err := os.ReadFile("/bin/true"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ef, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			return
		}
		depsOf(ef, "/nonexistent")
	})
}
