package unwind

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/probee/probee/internal/safeelf"
)

// sectionOf returns a CFI section of the ELF file at path and its bases.
func sectionOf(t testing.TB, path, name string) ([]byte, Bases) {
	t.Helper()
	f, err := safeelf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, addr, err := frameSection(f.File, name, readSection)
	if err != nil {
		t.Fatal(err)
	}
	return data, bases(f.File, addr)
}

// Parsed in parts, a section gives what one pass gives: the same FDEs in
// the same order, the same CIEs in the same order.
func TestParseParts(t *testing.T) {
	paths := []string{systemLib("libc.so.6"), systemLib("libstdc++.so.6"), filepath.Join(fixtureDir, "cxx")}
	if !testing.Short() {
		paths = append(paths, bigBinaries()...)
	}
	for _, p := range paths {
		if p == "" || !exists(p) {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, b := sectionOf(t, p, EhFrame)
			b.Deref = nil // a func: never DeepEqual; these sections need none
			want, err := newFrameParser(EhFrame, data, b).parse()
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{2, 3, 7} {
				got, ok := newFrameParser(EhFrame, data, b).parseParts(n)
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%d parts (ok %v): %d FDEs, %d CIEs; one pass: %d, %d", n, ok, len(got.FDEs), len(got.CIEs), len(want.FDEs), len(want.CIEs))
				}
			}
		})
	}
}
