package objfile

import (
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LoadObject passes on internal/safeelf's errors for unusable files (its
// tests hold every case) naming the file; ErrNotELF stays matchable, since
// searches skip such files.
func TestLoadObjectHostile(t *testing.T) {
	good, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	elf32 := append([]byte(nil), good[:4096]...)
	elf32[elf.EI_CLASS] = byte(elf.ELFCLASS32)
	cases := []struct {
		name   string
		data   []byte
		want   string
		notELF bool
	}{
		{"text", []byte("hello\n"), "not an ELF file", true},
		{"truncated", good[:100], "truncated or corrupt", false},
		{"32-bit", elf32, "32-bit ELF file", false},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadObject(p, "")
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s and %q", c.name, err, p, c.want)
		}
		if errors.Is(err, ErrNotELF) != c.notELF {
			t.Errorf("%s: errors.Is(%v, ErrNotELF) = %v", c.name, err, !c.notELF)
		}
	}
}
