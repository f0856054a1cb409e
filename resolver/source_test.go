package resolver

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
	"github.com/probee/probee/probespec"
)

func srcSpec(target probespec.Target, file string, line int) probespec.Spec {
	return probespec.Spec{Kind: probespec.Uprobe, Target: target, Source: probespec.Source{File: file, Line: line}}
}

// lineOf finds the line number of marker in a fixture source.
func lineOf(t *testing.T, src, marker string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "tests", "fixtures", "src", src))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) && !strings.Contains(l, "marked") {
			return i + 1
		}
	}
	t.Fatalf("%s has no %s", src, marker)
	return 0
}

func TestSourceLineInlinedTwice(t *testing.T) {
	p := maptest.Fixture(t, "inline")
	line := lineOf(t, "inline.c", "/* HOT_ADD_LINE */")
	for _, file := range []string{"inline.c", "src/inline.c", "fixtures/src/inline.c"} {
		ts := resolveOK(t, srcSpec(pathT(p), file, line), Scope{})
		if got := symbols(ts); !reflect.DeepEqual(got, []string{"caller_one", "caller_two"}) {
			t.Fatalf("%s:%d = %v, want both inlined copies", file, line, got)
		}
		for _, tg := range ts {
			if tg.Line != line || !strings.HasSuffix(tg.SourceFile, "/src/inline.c") {
				t.Errorf("target %+v", tg)
			}
		}
	}
	line = lineOf(t, "inline.c", "/* NOT_INLINED_LINE */")
	ts := resolveOK(t, srcSpec(pathT(p), "inline.c", line), Scope{})
	if got := symbols(ts); !reflect.DeepEqual(got, []string{"not_inlined"}) {
		t.Errorf("NOT_INLINED_LINE = %v", got)
	}
}

func TestSourceLineErrors(t *testing.T) {
	p := maptest.Fixture(t, "inline")
	line := lineOf(t, "inline.c", "/* HOT_ADD_LINE */")
	spec := srcSpec(pathT(p), "inline.c", line)
	spec.Ret = true
	if _, err := Resolve(spec, Scope{}); err == nil || !strings.Contains(err.Error(), "return probe") {
		t.Errorf("ret with a line: %v", err)
	}
	if _, err := Resolve(srcSpec(pathT(p), "inline.c", 1), Scope{}); err == nil || !strings.Contains(err.Error(), "lines with code nearby") {
		t.Errorf("line without code: %v", err)
	}
	if _, err := Resolve(srcSpec(pathT(p), "nline.c", line), Scope{}); err == nil || !strings.Contains(err.Error(), "was it built with -g") {
		t.Errorf("file suffix not on a / boundary: %v", err)
	}
	// A Go release build has lines (.gopclntab) but no line table to place
	// probes at: the error says what to build instead.
	gofx := pathT(maptest.Fixture(t, "gofx-stripped"))
	if _, err := Resolve(srcSpec(gofx, "main.go", 58), Scope{}); err == nil || !strings.Contains(err.Error(), "Go binary without DWARF") {
		t.Errorf("Go release build: %v", err)
	}
}

// TestSourceLineAmbiguous builds a binary from two files both named x.c.
func TestSourceLineAmbiguous(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed: apt-get install gcc")
	}
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
		src := "int f_" + d + "(int x)\n{\n\treturn x + 1;\n}\n"
		if d == "a" {
			src += "int main(void) { return f_a(1) + f_b(2); }\n"
		}
		os.WriteFile(filepath.Join(dir, d, "x.c"), []byte(src), 0o644)
	}
	bin := filepath.Join(dir, "amb")
	cmd := exec.Command(cc, "-g", "-O0", "-o", bin, "a/x.c", "b/x.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	_, err = Resolve(srcSpec(pathT(bin), "x.c", 3), Scope{})
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "a/x.c") || !strings.Contains(err.Error(), "b/x.c") {
		t.Fatalf("err = %v", err)
	}
	ts := resolveOK(t, srcSpec(pathT(bin), "b/x.c", 3), Scope{})
	if got := symbols(ts); !reflect.DeepEqual(got, []string{"f_b"}) {
		t.Errorf("b/x.c:3 = %v", got)
	}
}
