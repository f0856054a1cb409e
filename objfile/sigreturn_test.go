package objfile

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// sigreturnELF is a library with .text at 0x1000-0x1100 holding the
// sigreturn code at each of at (after a nop), and .dynsym exporting
// exported at 0x1080 (16 bytes).
func sigreturnELF(exported string, at ...int) []byte {
	e := newTestELF()
	code := make([]byte, 0x100)
	for _, a := range at {
		code[a-1] = 0x90
		copy(code[a:], sigreturnCode)
	}
	text := e.add(testSection{name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, addr: 0x1000, data: code})
	dynstr := e.add(testSection{name: ".dynstr", typ: elf.SHT_STRTAB, data: []byte("\x00" + exported + "\x00")})
	e.add(testSection{name: ".dynsym", typ: elf.SHT_DYNSYM, flags: elf.SHF_ALLOC, link: uint32(dynstr), data: e.syms(funcSym(1, text, 0x1080))})
	return e.bytes()
}

// The trampoline a signal handler returns into is named __restore_rt from
// the byte before it (a return address's lookup) to its end, in a library
// that exports sigaction and holds its code once; the bytes around are
// not named.
func TestSigreturnLabel(t *testing.T) {
	named := []nameCase{{0x101f, "", 0}, {0x1020, "__restore_rt", 0}, {0x1029, "__restore_rt", 9}, {0x102a, "", 0}}
	unnamed := []nameCase{{0x1020, "", 0}, {0x1025, "", 0}}
	for _, c := range []struct {
		name     string
		exported string
		at       []int
		want     []nameCase
	}{
		{"glibc", "__sigaction", []int{0x21}, named},
		{"musl", "sigaction", []int{0x21}, named},
		{"no sigaction", "signal", []int{0x21}, unnamed},
		{"twice", "sigaction", []int{0x21, 0x41}, unnamed},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := NewObject(c.name, bytes.NewReader(sigreturnELF(c.exported, c.at...)))
			if err != nil {
				t.Fatal(err)
			}
			checkNames(t, o, c.want)
		})
	}
}

// readelf is the oracle on this machine's libc: the label covers exactly
// the one FDE whose CIE marks a signal frame (augmentation 'S').
func TestSigreturnLabelLibc(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(libc); err != nil {
		t.Skip("no Debian x86-64 libc here")
	}
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf (binutils) is missing")
	}
	// readelf exits 1 without a message where it cannot follow libc's
	// .gnu_debuglink; the dump is complete regardless.
	out, err := exec.Command("readelf", "--debug-dump=frames", libc).Output()
	if err != nil && !bytes.Contains(out, []byte("Contents of the")) {
		t.Fatal(err)
	}
	start, end := signalFDE(t, out)
	o, err := LoadObject(libc, "")
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, o, []nameCase{{start - 1, "", 0}, {start, "__restore_rt", 0}, {end - 1, "__restore_rt", end - 1 - start}, {end, "", 0}})
}

// signalFDE returns the range of the one FDE of readelf's frame dump
// whose CIE's augmentation has an 'S'.
func signalFDE(t *testing.T, dump []byte) (start, end uint64) {
	t.Helper()
	cies := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([0-9a-f]+) [0-9a-f]+ 0+ CIE\n.*\n\s+Augmentation:\s+"([^"]*)"`).FindAllSubmatch(dump, -1) {
		cies[string(m[1])] = bytes.ContainsRune(m[2], 'S')
	}
	var found [][]byte
	for _, m := range regexp.MustCompile(`FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)`).FindAllSubmatch(dump, -1) {
		if cies[string(m[1])] {
			found = append(found, m[2], m[3])
		}
	}
	if len(cies) == 0 || len(found) != 2 {
		t.Fatalf("%d CIEs, want one FDE of a signal frame's CIE, got %q", len(cies), found)
	}
	start, _ = strconv.ParseUint(string(found[0]), 16, 64)
	end, _ = strconv.ParseUint(string(found[1]), 16, 64)
	return start, end
}
