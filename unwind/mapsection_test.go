package unwind

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A file that shrinks after its CFI was mapped (another program truncates
// it) fails to build with an error where reading the mapping faults; it
// does not crash. Unshrunk, the same copy builds.
func TestBuildFileShrinks(t *testing.T) {
	for _, name := range []string{"libc.so.6", "libLLVM-14.so.1"} { // one part, parts
		src := systemLib(name)
		if src == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := BuildFile(p); err != nil {
				t.Fatalf("intact copy: %v", err)
			}
			testMapped = func(path string) { os.Truncate(path, 4096) }
			defer func() { testMapped = nil }()
			_, err = BuildFile(p)
			if err == nil || !strings.Contains(err.Error(), "invalid memory address") {
				t.Errorf("shrunk file: error %v, want one about the fault", err)
			}
		})
	}
}

// Parts evaluated on goroutines of their own turn a fault reading their
// FDEs' instructions into an error too.
func TestBuildPartsFault(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fr := randomFrames(rng, 40)
	code := fr.data
	p := filepath.Join(t.TempDir(), "cfi")
	if err := os.WriteFile(p, append(code, make([]byte, 8192)...), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	m, err := unix.Mmap(int(fh.Fd()), 0, len(code)+8192, unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	fr.data = m[:len(code)]
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	frames := []*CFI{fr}
	if _, err := build(sortFDEs(frames), 2); err == nil || !strings.Contains(err.Error(), "evaluating FDEs") {
		t.Errorf("error %v, want the fault of a part", err)
	}
}
