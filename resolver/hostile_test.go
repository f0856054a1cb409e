package resolver

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Unusable ELF files get an error naming the file and the problem.
func TestLoadObjectHostile(t *testing.T) {
	good, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	patch := func(i int, v byte) []byte {
		b := append([]byte(nil), good[:4096]...)
		b[i] = v
		return b
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an ELF file"},
		{"text", []byte("hello\n"), "not an ELF file"},
		{"magic only", []byte(elf.ELFMAG), "truncated or corrupt"},
		{"truncated", good[:100], "truncated or corrupt"},
		{"32-bit", patch(elf.EI_CLASS, byte(elf.ELFCLASS32)), "32-bit ELF file"},
		{"bad class", patch(elf.EI_CLASS, 9), "unknown class 9"},
		{"big-endian", patch(elf.EI_DATA, byte(elf.ELFDATA2MSB)), "big-endian ELF file"},
		{"bad byte order", patch(elf.EI_DATA, 0), "unknown byte order 0"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadObject(p, "")
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s and %q", c.name, err, p, c.want)
		}
	}
}
