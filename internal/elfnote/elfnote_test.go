package elfnote

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"regexp"
	"testing"
)

// note builds one ELF note with fields padded to pad bytes.
func note(typ uint32, name string, desc []byte, pad int) []byte {
	var b bytes.Buffer
	for _, v := range []uint32{uint32(len(name) + 1), uint32(len(desc)), typ} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	up := func(s []byte) []byte { return append(s, make([]byte, (pad-len(s)%pad)%pad)...) }
	b.Write(up(append([]byte(name), 0)))
	b.Write(up(desc))
	return b.Bytes()
}

func TestFind(t *testing.T) {
	id := []byte{0xde, 0xad, 0xbe, 0xef, 0x01}
	abi := note(1, "GNU", []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, 4)
	full := append(append([]byte{}, abi...), note(3, "GNU", id, 4)...)
	for _, c := range []struct {
		name  string
		b     []byte
		align uint64
		want  string
	}{
		{"after another note", full, 4, "deadbeef01"},
		{"8-aligned", append(note(1, "Go", []byte("xyz"), 8), note(3, "GNU", id, 8)...), 8, "deadbeef01"},
		{"other owner", note(3, "XYZ", id, 4), 4, ""},
		{"truncated desc", full[:len(full)-4], 4, ""},
		{"empty", nil, 4, ""},
		{"huge sizes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 'G', 'N', 'U', 0}, 4, ""},
	} {
		if got := Find(c.b, c.align, binary.LittleEndian); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// BuildID agrees with readelf on the system's libc and ld.so.
func TestBuildIDMatchesReadelf(t *testing.T) {
	re := regexp.MustCompile(`Build ID: ([0-9a-f]+)`)
	for _, path := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"} {
		out, err := exec.Command("readelf", "-n", path).Output()
		m := re.FindSubmatch(out)
		if err != nil || m == nil {
			t.Skipf("readelf -n %s: %v", path, err)
		}
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := BuildID(f); got != string(m[1]) {
			t.Errorf("%s: %q, readelf says %q", path, got, m[1])
		}
		f.Close()
	}
}

func FuzzFind(f *testing.F) {
	f.Add(note(3, "GNU", []byte{1, 2, 3, 4}, 4), uint64(4))
	f.Add(note(3, "GNU", []byte{1, 2, 3, 4}, 8), uint64(8))
	f.Fuzz(func(t *testing.T, b []byte, align uint64) {
		Find(b, align, binary.LittleEndian)
		Find(b, align, binary.BigEndian)
	})
}

func TestNotes(t *testing.T) {
	b := append(note(3, "GNU", []byte{1, 2, 3}, 4), note(3, "stapsdt", []byte("desc"), 4)...)
	got := Notes(b, 4, binary.LittleEndian)
	if len(got) != 2 || got[0].Name != "GNU" || string(got[0].Desc) != "\x01\x02\x03" ||
		got[1].Name != "stapsdt" || got[1].Type != 3 || string(got[1].Desc) != "desc" {
		t.Errorf("Notes = %+v", got)
	}
	// A truncated last note ends the walk; the ones before it are kept.
	if got := Notes(b[:len(b)-2], 4, binary.LittleEndian); len(got) != 1 {
		t.Errorf("truncated: %+v, want the first note only", got)
	}
	// A descriptor cannot be grown into the next note's bytes.
	if d := got[0].Desc; cap(d) != len(d) {
		t.Errorf("desc capacity %d > length %d", cap(d), len(d))
	}
}

// SectionNotes reads .note.stapsdt of Debian's python3.11 (8 notes) and
// refuses a section over the limit.
func TestSectionNotes(t *testing.T) {
	f, err := elf.Open("/usr/bin/python3.11")
	if err != nil {
		t.Skipf("no Debian python3.11: %v", err)
	}
	defer f.Close()
	notes, err := SectionNotes(f, ".note.stapsdt", 1<<20)
	if err != nil || len(notes) != 8 || notes[0].Name != "stapsdt" {
		t.Errorf("SectionNotes = %d notes, %v; want 8 stapsdt notes", len(notes), err)
	}
	if _, err := SectionNotes(f, ".note.stapsdt", 16); err == nil {
		t.Error("a section over the limit was read")
	}
	if notes, err := SectionNotes(f, ".note.nope", 16); notes != nil || err != nil {
		t.Errorf("missing section: %v, %v", notes, err)
	}
	if _, err := SectionNotes(f, ".text", 1<<30); err == nil {
		t.Error(".text read as notes")
	}
}
