package usdt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/testgate"
)

// sdtNote builds one stapsdt note (desc: pc, base, semaphore, then the
// three strings), padded to 4 bytes.
func sdtNote(pc, base, sem uint64, provider, name, args string) []byte {
	desc := binary.LittleEndian.AppendUint64(nil, pc)
	desc = binary.LittleEndian.AppendUint64(desc, base)
	desc = binary.LittleEndian.AppendUint64(desc, sem)
	desc = append(desc, provider+"\x00"+name+"\x00"+args+"\x00"...)
	return rawNote(noteType, noteOwner, desc)
}

func rawNote(typ uint32, owner string, desc []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(owner)+1))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, typ)
	pad := func(s []byte) []byte { return append(s, make([]byte, (4-len(s)%4)%4)...) }
	b = append(b, pad(append([]byte(owner), 0))...)
	return append(b, pad(desc)...)
}

// testLayout: code at 0x1000-0x2000 (file 0x1000), writable data at
// 0x4000-0x5000 (file 0x3000), .stapsdt.base at 0x2096.
var testLayout = layout{base: 0x2096, hasBase: true, loads: []safeelf.Segment{
	{Vaddr: 0x1000, Offset: 0x1000, Filesz: 0x1000, Memsz: 0x1000, Flags: elf.PF_R | elf.PF_X},
	{Vaddr: 0x4000, Offset: 0x3000, Filesz: 0x1000, Memsz: 0x2000, Flags: elf.PF_R | elf.PF_W},
}}

func decode(t *testing.T, l layout, notes ...[]byte) ([]Probe, error) {
	t.Helper()
	return probesOf(elfnote.Notes(bytes.Join(notes, nil), 4, binary.LittleEndian), l)
}

func TestProbesOf(t *testing.T) {
	got, err := decode(t, testLayout,
		sdtNote(0x13f0, 0x2096, 0, "fx", "multi", "-4@%edi"),
		rawNote(1, "GNU", []byte{1, 2, 3, 4}),     // another owner: skipped
		rawNote(2, noteOwner, []byte{1, 2, 3, 4}), // another version: skipped
		sdtNote(0x1354, 0x2096, 0x4070, "fx", "gated", "-4@%edi 8@-8(%rbp)"),
		sdtNote(0x13d0, 0x2096, 0, "fx", "multi", "-4@$1"),
		sdtNote(0x13d0, 0x2096, 0, "fx", "multi", "-4@$1"), // same address: once
		sdtNote(0x1400, 0x2096, 0, "a", "z", "4@%bogus"),
	)
	if err != nil {
		t.Fatal(err)
	}
	gated := Site{Address: 0x1354, FileOffset: 0x1354, Semaphore: 0x4070, SemaphoreOffset: 0x3070, ArgText: "-4@%edi 8@-8(%rbp)"}
	gated.Args, _ = ParseArgs(gated.ArgText)
	one, two := Site{Address: 0x13d0, FileOffset: 0x13d0, ArgText: "-4@$1"}, Site{Address: 0x13f0, FileOffset: 0x13f0, ArgText: "-4@%edi"}
	one.Args, _ = ParseArgs(one.ArgText)
	two.Args, _ = ParseArgs(two.ArgText)
	want := []Probe{
		{"a", "z", []Site{{Address: 0x1400, FileOffset: 0x1400, ArgText: "4@%bogus", ArgsErr: `argument "4@%bogus": unknown register %bogus`}}},
		{"fx", "gated", []Site{gated}},
		{"fx", "multi", []Site{one, two}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// A file moved after linking (prelink) has .stapsdt.base elsewhere than
// its notes say: probe and semaphore addresses move by as much.
func TestStapsdtBaseAdjustment(t *testing.T) {
	for _, c := range []struct {
		name          string
		l             layout
		noteBase      uint64
		wantPC, wantS uint64
		wantErr       string
	}{
		{name: "in place", l: testLayout, noteBase: 0x2096, wantPC: 0x1354, wantS: 0x4070},
		{name: "moved up 0x100", l: testLayout, noteBase: 0x1f96, wantPC: 0x1454, wantS: 0x4170},
		{name: "moved down 0x100", l: testLayout, noteBase: 0x2196, wantErr: "semaphore 0x3f70 is in no writable"},
		{name: "no .stapsdt.base", l: layout{loads: testLayout.loads}, noteBase: 0x1f96, wantPC: 0x1354, wantS: 0x4070},
		{name: "note base 0", l: testLayout, noteBase: 0, wantPC: 0x1354, wantS: 0x4070},
	} {
		probes, err := decode(t, c.l, sdtNote(0x1354, c.noteBase, 0x4070, "p", "n", ""))
		if c.wantErr != "" || err != nil {
			if err == nil || c.wantErr == "" || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		s := probes[0].Sites[0]
		if s.Address != c.wantPC || s.Semaphore != c.wantS || s.FileOffset != c.wantPC || s.SemaphoreOffset != c.wantS-0x1000 {
			t.Errorf("%s: site %+v, want pc %#x semaphore %#x", c.name, s, c.wantPC, c.wantS)
		}
	}
}

func TestMalformedNotes(t *testing.T) {
	short := rawNote(noteType, noteOwner, make([]byte, 23))
	for _, c := range []struct {
		note []byte
		msg  string
	}{
		{short, "note 0 of .note.stapsdt: descriptor of 23 bytes, want at least 24"},
		{rawNote(noteType, noteOwner, append(make([]byte, 24), "fx\x00name"...)), "descriptor ends inside string 2 of 3"},
		{sdtNote(0x1354, 0x2096, 0, "", "n", ""), "empty provider or probe name"},
		{sdtNote(0x3000, 0x2096, 0, "p", "n", ""), "p:n: probe address 0x3000 is in no executable PT_LOAD segment"},
		{sdtNote(0x4000, 0x2096, 0, "p", "n", ""), "probe address 0x4000 is in no executable"},
		{sdtNote(0x1354, 0x2096, 0x4fff, "p", "n", ""), "semaphore 0x4fff is in no writable file-backed"},
		{sdtNote(0x1354, 0x2096, 0x1400, "p", "n", ""), "semaphore 0x1400 is in no writable"},
	} {
		_, err := decode(t, testLayout, c.note)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("error %v, want %q", err, c.msg)
		}
	}
}

// readelfNote is one note as readelf -n prints it.
type readelfNote struct {
	provider, name, args string
	pc, base, sem        uint64
}

var (
	reProvider = regexp.MustCompile(`\sProvider: (\S+)$`)
	reName     = regexp.MustCompile(`^\s+Name: (\S+)$`)
	reLocation = regexp.MustCompile(`^\s+Location: (0x[0-9a-f]+), Base: (0x[0-9a-f]+), Semaphore: (0x[0-9a-f]+)$`)
	reArgs     = regexp.MustCompile(`^\s+Arguments: ?(.*)$`)
)

// readelfNotes runs readelf -n on path: the oracle, which shares no code
// with the parser.
func readelfNotes(t *testing.T, path string) []readelfNote {
	t.Helper()
	out, err := exec.Command("readelf", "-n", "-W", path).Output()
	if err != nil {
		t.Skipf("readelf -n %s: %v", path, err)
	}
	var notes []readelfNote
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case reProvider.MatchString(line):
			notes = append(notes, readelfNote{provider: reProvider.FindStringSubmatch(line)[1]})
		case len(notes) == 0:
		case reName.MatchString(line):
			notes[len(notes)-1].name = reName.FindStringSubmatch(line)[1]
		case reLocation.MatchString(line):
			m := reLocation.FindStringSubmatch(line)
			n := &notes[len(notes)-1]
			n.pc, _ = strconv.ParseUint(m[1], 0, 64)
			n.base, _ = strconv.ParseUint(m[2], 0, 64)
			n.sem, _ = strconv.ParseUint(m[3], 0, 64)
		case reArgs.MatchString(line):
			notes[len(notes)-1].args = reArgs.FindStringSubmatch(line)[1]
		}
	}
	return notes
}

// realFiles are files with USDT notes: the fixtures, Debian's python3.11
// and libstdc++, and every JDK's libjvm.so.
func realFiles(t *testing.T) []string {
	files := []string{"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}
	jvms, _ := filepath.Glob("/usr/lib/jvm/*/lib/server/libjvm.so")
	files = append(files, jvms...)
	var out []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	for _, name := range []string{"usdt-fp", "usdt-nofp", "libusdtfx.so"} {
		p, _ := filepath.Abs(filepath.Join("..", "..", "tests", "fixtures", "bin", name))
		out = append(out, testgate.Fixture(t, p))
	}
	return out
}

// Every note readelf prints is a site of its probe, at the address the
// .stapsdt.base adjustment gives, with its semaphore and argument string;
// every argument string parses; a site's file offset holds the nop
// sys/sdt.h puts there, its semaphore's lies in .probes.
func TestReadMatchesReadelf(t *testing.T) {
	for _, path := range realFiles(t) {
		t.Run(path, func(t *testing.T) {
			want := readelfNotes(t, path)
			probes, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			checkSites(t, f, path, probes, want)
			t.Logf("%s: %d probes at %d sites", path, len(probes), len(want))
		})
	}
}

func checkSites(t *testing.T, f *elf.File, path string, probes []Probe, want []readelfNote) {
	t.Helper()
	sites := map[string]Site{}
	for _, p := range probes {
		for _, s := range p.Sites {
			sites[fmt.Sprintf("%s:%s@%#x", p.Provider, p.Name, s.Address)] = s
			if s.ArgsErr != "" {
				t.Errorf("%s:%s: %s", p.Provider, p.Name, s.ArgsErr)
			}
		}
	}
	if len(sites) != len(want) {
		t.Errorf("%d sites, readelf prints %d notes", len(sites), len(want))
	}
	delta := f.Section(".stapsdt.base").Addr
	raw, _ := os.ReadFile(path)
	probesSec := f.Section(".probes")
	for _, n := range want {
		pc := n.pc + delta - n.base
		s, ok := sites[fmt.Sprintf("%s:%s@%#x", n.provider, n.name, pc)]
		switch {
		case !ok:
			t.Errorf("no site %s:%s at %#x", n.provider, n.name, pc)
			continue
		case s.ArgText != n.args || s.Semaphore != n.sem:
			t.Errorf("%s:%s: site %+v, readelf says %+v", n.provider, n.name, s, n)
		case raw[s.FileOffset] != 0x90:
			t.Errorf("%s:%s: byte %#x at file offset %#x, want a nop (0x90)", n.provider, n.name, raw[s.FileOffset], s.FileOffset)
		}
		if n.sem != 0 && (probesSec == nil || s.SemaphoreOffset < probesSec.Offset || s.SemaphoreOffset+2 > probesSec.Offset+probesSec.Size) {
			t.Errorf("%s:%s: semaphore file offset %#x is not in .probes", n.provider, n.name, s.SemaphoreOffset)
		}
	}
}
