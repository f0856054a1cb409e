package usdt

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/probee/probee/internal/elfnote"
)

// noteSections returns the raw .note.stapsdt of the fixtures and of
// Debian's python3.11, where they exist: seeds.
func noteSections() [][]byte {
	var out [][]byte
	for _, p := range []string{"../../tests/fixtures/bin/usdt-fp", "../../tests/fixtures/bin/libusdtfx.so", "/usr/bin/python3.11"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		if s := f.Section(".note.stapsdt"); s != nil {
			if b, err := s.Data(); err == nil {
				out = append(out, b)
			}
		}
		f.Close()
	}
	return out
}

// FuzzNotes feeds arbitrary note data, laid out against testLayout with
// .stapsdt.base at base: never a panic; what decodes is sorted, placed in
// the segments, and its arguments print back to themselves.
func FuzzNotes(f *testing.F) {
	f.Add(bytes.Join([][]byte{
		sdtNote(0x1354, 0x2096, 0x4070, "fx", "gated", "-4@%edi 8@%rdx 8f@%rax -8@fx_config(%rip)"),
		sdtNote(0x13d0, 0x2096, 0, "fx", "multi", "-4@$1"),
		sdtNote(0x13f0, 0x2096, 0, "fx", "multi", "8@-8(%rbp,%rax,8) 4@(,%r9,4) 8@sym+8(%rip)"),
	}, nil), uint64(0x2096))
	f.Add(sdtNote(0x1354, 0x1f96, 0x4070, "p", "n", "-4@112(%rsp)"), uint64(0x2096))
	for _, b := range noteSections() {
		f.Add(b, uint64(0x2096))
	}
	f.Fuzz(func(t *testing.T, b []byte, base uint64) {
		l := testLayout
		l.base = base
		probes, err := probesOf(elfnote.Notes(b, 4, binary.LittleEndian), l)
		if err != nil {
			return
		}
		checkProbes(t, probes)
	})
}

func checkProbes(t *testing.T, probes []Probe) {
	if !slices.IsSortedFunc(probes, func(a, b Probe) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Name, b.Name))
	}) {
		t.Fatalf("probes not sorted: %+v", probes)
	}
	for _, p := range probes {
		for i, s := range p.Sites {
			if i > 0 && s.Address <= p.Sites[i-1].Address {
				t.Fatalf("%s:%s: sites not sorted and unique: %+v", p.Provider, p.Name, p.Sites)
			}
			if s.Address < 0x1000 || s.Address >= 0x2000 || (s.Semaphore != 0 && (s.Semaphore < 0x4000 || s.Semaphore >= 0x4fff)) {
				t.Fatalf("%s:%s: site %+v outside its segments", p.Provider, p.Name, s)
			}
			checkArgs(t, s.Args)
		}
	}
}

// checkArgs checks that parsed arguments print back to themselves and
// marshal to JSON.
func checkArgs(t *testing.T, args []Arg) {
	for _, a := range args {
		back, err := ParseArg(a.String())
		if err != nil || back != a {
			t.Fatalf("%+v prints as %q, which parses to %+v, %v", a, a.String(), back, err)
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
	}
}

// FuzzParseArgs: never a panic, and what parses prints back to itself.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"-4@%esi 8@-8(%rbp)", "8@%r14 8@%rax -4@%ebp", "-4@112(%rsp)", "8f@%xmm1",
		"8@8(%rax,%rcx,8)", "4@(,%r9,4)", "-8@fx_config(%rip)", "8@_ZL4tabl.1+16(%rip)", "-4@$-1",
		"8@$table", "4@0x1234", "1@%ah", "8@$18446744073709551615", "8@sym-0x10(%rip)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := ParseArgs(s)
		if err != nil {
			return
		}
		checkArgs(t, args)
	})
}

// FuzzNewFile feeds arbitrary bytes as an ELF file: an error or probes,
// never a panic.
func FuzzNewFile(f *testing.F) {
	for _, name := range []string{"usdt-fp", "libusdtfx.so"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "tests", "fixtures", "bin", name)); err == nil {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		NewFile("fuzz", bytes.NewReader(b))
	})
}
