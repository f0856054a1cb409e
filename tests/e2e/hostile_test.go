package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/internal/testgate"
)

// hostileFiles writes broken and unsupported ELF files into dir, each with
// the text its error must contain ("" when it may even parse).
func hostileFiles(t *testing.T, dir, good string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	patched := func(edit func(b []byte)) []byte {
		b := bytes.Clone(data)
		edit(b)
		return b
	}
	files := map[string][]byte{
		"zero-length": nil,
		"not-elf":     []byte("#!/bin/sh\necho hello\n"),
		"elf-magic":   []byte(elf.ELFMAG),
		"trunc-64":    data[:64],
		"trunc-4096":  data[:4096],
		"trunc-half":  data[:len(data)/2],
		"big-endian":  patched(func(b []byte) { b[elf.EI_DATA] = byte(elf.ELFDATA2MSB) }),
		"bad-class":   patched(func(b []byte) { b[elf.EI_CLASS] = 7 }),
		"shoff-huge":  patched(func(b []byte) { le.PutUint64(b[0x28:], 1<<62) }),
		"shnum-huge":  patched(func(b []byte) { le.PutUint16(b[0x3c:], 0xfff0) }),
		"phoff-huge":  patched(func(b []byte) { le.PutUint64(b[0x20:], 1<<62) }),
		"elf32":       elf32(),
	}
	want := map[string]string{
		"zero-length": "not an ELF file", "not-elf": "not an ELF file", "elf-magic": "truncated or corrupt",
		"trunc-64": "truncated or corrupt", "trunc-4096": "truncated or corrupt", "trunc-half": "truncated or corrupt",
		"big-endian": "big-endian", "bad-class": "unknown class", "elf32": "32-bit",
	}
	// Seeded byte flips over the headers: any outcome but a panic.
	rng := rand.New(rand.NewSource(9))
	for i := range 8 {
		files["flipped-"+strconv.Itoa(i)] = patched(func(b []byte) {
			for range 64 {
				b[rng.Intn(min(len(b), 8192))] ^= byte(1 + rng.Intn(255))
			}
		})
	}
	out := map[string]string{}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		out[p] = want[name]
	}
	return out
}

// elf32 is a minimal 32-bit x86 ELF executable header, no sections.
func elf32() []byte {
	var b bytes.Buffer
	h := elf.Header32{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_386), Version: uint32(elf.EV_CURRENT), Ehsize: 52}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS32), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	binary.Write(&b, binary.LittleEndian, &h)
	return b.Bytes()
}

// Truncated, corrupt, empty, non-ELF, 32-bit and big-endian files as
// --uprobe and --list-probes targets: a one-line error naming the file and
// what is wrong with it, never a panic.
func TestHostileFiles(t *testing.T) {
	testgate.Root(t)
	dir := t.TempDir()
	for path, want := range hostileFiles(t, dir, fixture(t, "chain-fp")) {
		for _, args := range [][]string{
			{"--list-probes", path + ":leaf"},
			{"--uprobe", path + ":leaf", "-d", "100ms"},
		} {
			t.Run(filepath.Base(path)+args[0], func(t *testing.T) {
				r := run(t, dir, args...)
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
					t.Fatalf("probee panicked:\n%s", r.stderr)
				}
				if want == "" && r.code == 0 {
					return // the flips left a usable file
				}
				if r.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "probee: ") ||
					!strings.Contains(lines[0], path) || !strings.Contains(lines[0], want) {
					t.Errorf("exit %d, stderr %q: want exit 1 and one line naming %s and %q", r.code, r.stderr, path, want)
				}
			})
		}
	}
}

// Specs of 128 KiB (the longest argument Linux passes; 1 MB and NUL bytes
// are tested in-process in cmd/probee) and of invalid UTF-8 on the command
// line: exit 2 with the reason.
func TestHostileSpecsCLI(t *testing.T) {
	testgate.Root(t)
	cases := []struct{ spec, want string }{
		{strings.Repeat("a", 128<<10-1), "spec too long"},
		{"libc:" + strings.Repeat("x*", 64<<10-4), "spec too long"},
		{"mal\xffloc", "invalid UTF-8"},
		{"libc:\xc3", "invalid UTF-8"},
	}
	for i, c := range cases {
		for _, flag := range []string{"--uprobe", "--list-probes"} {
			t.Run(strconv.Itoa(i)+flag, func(t *testing.T) {
				r := run(t, "", flag, c.spec)
				if r.code != 2 || !strings.HasPrefix(r.stderr, "probee: "+flag) || !strings.Contains(r.stderr, c.want) {
					t.Errorf("exit %d, stderr %.300q: want exit 2 and %q", r.code, r.stderr, c.want)
				}
			})
		}
	}
}
