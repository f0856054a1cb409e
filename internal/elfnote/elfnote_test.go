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
