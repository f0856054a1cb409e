package bpf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mapHeaders are the headers that define maps (SEC(".maps")); every other
// header holds code and types only.
var mapHeaders = []string{"latency_maps.h", "maps.h", "unwind_maps.h"}

// secRE finds a section attribute: a program (SEC("uprobe")...) or a map
// (SEC(".maps")).
var secRE = regexp.MustCompile(`\bSEC\("([^"]*)"\)`)

// TestHeaderLayout holds the BPF C to its layout: probee.bpf.c defines
// every program, the map headers every map, and each header compiles on
// its own after its includes, in both builds (gen.go), so that no header
// depends on what was included before it.
func TestHeaderLayout(t *testing.T) {
	headers, err := filepath.Glob("*.h")
	if err != nil || len(headers) == 0 {
		t.Fatalf("no headers: %v", err)
	}
	for _, h := range headers {
		src, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range secRE.FindAllSubmatch(src, -1) {
			switch sec := string(m[1]); {
			case sec != ".maps":
				t.Errorf("%s defines a program (SEC(%q)): programs go in probee.bpf.c", h, sec)
			case !slices.Contains(mapHeaders, h):
				t.Errorf("%s defines a map: maps go in %s", h, strings.Join(mapHeaders, ", "))
			}
		}
	}
	clang, err := exec.LookPath("clang")
	if err != nil {
		t.Skip("no clang (make generate installs it): the headers' includes are not checked")
	}
	for _, h := range headers {
		for _, legacy := range []bool{false, true} {
			if out, err := compileAlone(clang, h, legacy); err != nil {
				t.Errorf("%s (legacy %v) does not compile on its own: include what it uses\n%s", h, legacy, out)
			}
		}
	}
}

// compileAlone checks the syntax of a unit that includes header h only,
// with gen.go's flags (unused static functions aside: a header alone does
// not call its callbacks).
func compileAlone(clang, h string, legacy bool) ([]byte, error) {
	args := []string{"-target", "bpf", "-O2", "-Wall", "-Werror", "-Wno-unused-function",
		"-D__TARGET_ARCH_x86", "-I/usr/include/x86_64-linux-gnu", "-I.", "-fsyntax-only", "-x", "c", "-"}
	if legacy {
		args = append(args, "-DPROBEE_LEGACY")
	}
	cmd := exec.Command(clang, args...)
	cmd.Stdin = strings.NewReader(`#include "` + h + `"` + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
