package resolver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzNewObject feeds arbitrary bytes to the ELF symbol scan: it must
// return an error or an object, never panic.
func FuzzNewObject(f *testing.F) {
	for _, name := range []string{"chain-nopie-nofp", "libfx.so"} {
		if b, err := os.ReadFile(filepath.Join("..", "tests", "fixtures", "bin", name)); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
			f.Add(b[:64])
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add(labelELF())
	f.Add(sigreturnELF("sigaction", 0x21))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := NewObject("fuzz", bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, s := range o.Funcs {
			o.FileOffset(s.Addr)
			o.funcAt(s.Addr + 1)
		}
		for _, l := range o.labels {
			var fr Frame
			o.symbolize(&fr, l.Addr+l.Size/2)
		}
		o.VirtAddr(0x1000)
	})
}

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
