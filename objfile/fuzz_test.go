package objfile

import (
	"bytes"
	"os"
	"path/filepath"
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
			o.FuncAt(s.Addr + 1)
		}
		for _, l := range o.labels {
			o.SymbolAt(l.Addr + l.Size/2)
		}
		o.VirtAddr(0x1000)
	})
}
