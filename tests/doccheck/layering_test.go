package doccheck

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layering docs/design.md's package table describes: which packages a
// package's non-test code must not import. Only bpf touches the kernel,
// and the packages below it reach it through bpf/wire and an interface;
// parsing, resolution and symbolization stay pure; the writers know
// nothing of how frames were found.
var forbidden = map[string][]string{
	"bpf/wire":  {"bpf", "proctrack", "trace"},
	"proctrack": {"bpf", "symbolize", "output", "trace"},
	"symbolize": {"bpf", "resolver", "trace"},
	"objfile":   {"bpf", "resolver", "symbolize", "proctrack", "trace"},
	"resolver":  {"bpf", "symbolize", "proctrack", "output", "trace"},
	"unwind":    {"bpf", "objfile", "resolver", "proctrack", "trace"},
	"output":    {"bpf", "symbolize", "objfile", "resolver", "proctrack", "unwind", "trace"},
	"push":      {"bpf", "symbolize", "resolver", "proctrack", "trace"},
	"probespec": {"bpf", "resolver", "output", "trace"},
	"bpf":       {"proctrack", "symbolize", "resolver", "output", "trace"},
}

func TestLayering(t *testing.T) {
	for pkg, not := range forbidden {
		p, err := build.ImportDir(filepath.Join(repoRoot(t), pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, "github.com/probee/probee/")
			if ok && slices.Contains(not, rel) {
				t.Errorf("%s imports %s, which the layering forbids (docs/design.md)", pkg, rel)
			}
		}
	}
}
