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

func FuzzParseKallsyms(f *testing.F) {
	if b, err := os.ReadFile("testdata/kallsyms"); err == nil {
		f.Add(string(b))
	}
	f.Add("ffffffff81000000 T x [mod]\n")
	f.Fuzz(func(t *testing.T, s string) {
		ks, _ := ParseKallsyms(strings.NewReader(s))
		kernelFrame(ks, 0xffffffff81000010)
		ParseFilterFunctions(strings.NewReader(s))
		ParseKprobeBlacklist(strings.NewReader(s))
	})
}
