package resolver

import (
	"os"
	"strings"
	"testing"
)

func FuzzParseLdCache(f *testing.F) {
	f.Add(buildLdCache(sampleLd, false))
	f.Add(buildLdCache(sampleLd, true))
	if b, err := os.ReadFile("/etc/ld.so.cache"); err == nil && len(b) < 1<<20 {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ParseLdCache(b)
		if err == nil && len(es) > len(b) {
			t.Fatalf("%d entries from %d bytes", len(es), len(b))
		}
	})
}

// FuzzParseKernelLists feeds arbitrary text to the parsers of tracefs'
// available_filter_functions and debugfs' kprobe blacklist (kallsyms is
// internal/kallsyms' FuzzParse).
func FuzzParseKernelLists(f *testing.F) {
	if b, err := os.ReadFile("testdata/tracefs/available_filter_functions"); err == nil {
		f.Add(string(b))
	}
	if b, err := os.ReadFile("testdata/kprobe_blacklist"); err == nil {
		f.Add(string(b))
	}
	f.Add("ffffffff81000000 x [mod]\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseFilterFunctions(strings.NewReader(s))
		ParseKprobeBlacklist(strings.NewReader(s))
	})
}
