package safeelf

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	err := Guard("lib.so", func() error { panic("index out of range") })
	if err == nil || !strings.Contains(err.Error(), "malformed ELF file lib.so: index out of range") {
		t.Errorf("panic: %v", err)
	}
	want := errors.New("plain")
	if err := Guard("lib.so", func() error { return want }); err != want {
		t.Errorf("error: %v, want it unchanged", err)
	}
}

// Unusable ELF files get an error naming the file and the problem.
func TestNewFileErrors(t *testing.T) {
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
	for _, c := range cases {
		_, err := NewFile(c.name, bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming it and %q", c.name, err, c.want)
		}
	}
	if _, err := NewFile("text", strings.NewReader("#!/bin/sh\n")); !errors.Is(err, ErrNotELF) {
		t.Errorf("text file: %v, want ErrNotELF", err)
	}
}

func TestOpen(t *testing.T) {
	f, err := Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	if f.Src.Size == 0 || f.Machine != elf.EM_X86_64 && f.Machine != elf.EM_AARCH64 {
		t.Errorf("size %d; machine %v", f.Src.Size, f.Machine)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := Open(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
