package hostile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The repository's seed corpora read as []byte values.
func TestReadCorpus(t *testing.T) {
	for _, c := range []struct {
		dir string
		min int
	}{
		{"../../unwind/testdata/fuzz/FuzzParseEhFrame", 5},
		{"../../objfile/testdata/fuzz/FuzzSymbolTables", 9},
		{"../../internal/perfmap/testdata/fuzz/FuzzParsePerfMap", 6},
	} {
		vals, err := ReadCorpus(c.dir)
		if err != nil || len(vals) < c.min {
			t.Errorf("%s: %d values, %v", c.dir, len(vals), err)
		}
	}
	if _, err := corpusBytes([]byte("not a corpus\n")); err == nil {
		t.Error("a file without the header was read")
	}
}

// Mutated is deterministic: two runs write the same files.
func TestMutated(t *testing.T) {
	eh, _ := ReadCorpus("../../unwind/testdata/fuzz/FuzzParseEhFrame")
	elfs, _ := ReadCorpus("../../objfile/testdata/fuzz/FuzzSymbolTables")
	var runs [2]map[string][]byte
	for i := range runs {
		dir := t.TempDir()
		paths, err := Mutated(dir, genuine(t), eh, elfs)
		if err != nil || len(paths) < 24+len(eh)+len(elfs)-1 {
			t.Fatalf("%d files, %v", len(paths), err)
		}
		runs[i] = map[string][]byte{}
		for _, p := range paths {
			runs[i][filepath.Base(p)], _ = os.ReadFile(p)
		}
	}
	for name, b := range runs[0] {
		if !bytes.Equal(b, runs[1][name]) || len(b) == 0 {
			t.Errorf("%s: %d bytes, then %d", name, len(b), len(runs[1][name]))
		}
	}
}
