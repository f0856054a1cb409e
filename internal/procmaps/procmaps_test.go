package procmaps

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

const sample = `55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 1234   /usr/bin/my prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fd:01 1234   /usr/bin/my prog
7f3a00000000-7f3a00001000 r-xp 00000000 08:01 99 /tmp/a dir/lib x.so (deleted)
7ffd1000-7ffd2000 r-xp 00000000 00:00 0                  [vdso]
7ffd3000-7ffd4000 rw-p 00000000 00:00 0
`

func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x55d0c0a00000, End: 0x55d0c0a01000, Perms: "r--p", Dev: "fd:01", Inode: 1234, Path: "/usr/bin/my prog"},
		{Start: 0x55d0c0a01000, End: 0x55d0c0a02000, Perms: "r-xp", Offset: 0x1000, Dev: "fd:01", Inode: 1234, Path: "/usr/bin/my prog"},
		{Start: 0x7f3a00000000, End: 0x7f3a00001000, Perms: "r-xp", Dev: "08:01", Inode: 99, Path: "/tmp/a dir/lib x.so", Deleted: true},
		{Start: 0x7ffd1000, End: 0x7ffd2000, Perms: "r-xp", Dev: "00:00", Path: "[vdso]"},
		{Start: 0x7ffd3000, End: 0x7ffd4000, Perms: "rw-p", Dev: "00:00"},
	}
	if len(ms) != len(want) {
		t.Fatalf("%d mappings, want %d", len(ms), len(want))
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, ms[i], want[i])
		}
	}
	if !ms[1].Exec() || ms[0].Exec() || !ms[1].File() || ms[3].File() {
		t.Error("Exec/File wrong")
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"zz-1 r-xp 0 0:0 0", "1 r-xp 0 0:0 0", "2-1 r-xp 0 0:0 0",
		"1-2 r-x 0 0:0 0", "1-2 r-xp zz 0:0 0", "1-2 r-xp 0 0:0 x", "1-2 r-xp 0",
	} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParse: no panics, and every accepted mapping is well-formed.
func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add("1-2 r-xp 0 0:0 0 /a (deleted)")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Fatalf("bad mapping accepted: %+v", m)
			}
		}
	})
}

// TestParseInterns: two processes' snapshots of one file share its path,
// permissions and device strings, and none keeps the line it came from.
func TestParseInterns(t *testing.T) {
	parse := func(addr string) Mapping {
		t.Helper()
		ms, err := Parse(strings.NewReader(addr + "-7f0000001000 r-xp 00001000 fd:01 42 /usr/lib/libfoo.so\n"))
		if err != nil || len(ms) != 1 {
			t.Fatalf("parse: %v %v", ms, err)
		}
		return ms[0]
	}
	a, b := parse("7f0000000000"), parse("7e0000000000")
	for _, f := range []struct{ name, x, y string }{{"path", a.Path, b.Path}, {"perms", a.Perms, b.Perms}, {"dev", a.Dev, b.Dev}} {
		if unsafe.StringData(f.x) != unsafe.StringData(f.y) {
			t.Errorf("%s %q: two copies", f.name, f.x)
		}
	}
}

// BenchmarkParse parses this process's maps, as a snapshot of a new
// process does.
func BenchmarkParse(b *testing.B) {
	text, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(text)); err != nil {
			b.Fatal(err)
		}
	}
}

// The maps of one process are read within MaxMapsBytes: past it they are
// an error, not a 270 MB read (65,530 mappings of 4 KiB paths).
func TestMaxMapsBytes(t *testing.T) {
	old := MaxMapsBytes
	t.Cleanup(func() { MaxMapsBytes = old })
	line := "7f0000000000-7f0000001000 r-xp 00000000 fd:01 42 /usr/lib/" + strings.Repeat("x", 60) + "\n"
	text := strings.Repeat(line, 10)
	path := filepath.Join(t.TempDir(), "maps")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max  int64
		want bool // read
	}{{int64(len(text)), true}, {int64(len(text)) - 1, false}} {
		MaxMapsBytes = c.max
		m, err := Parse(strings.NewReader(text))
		if (err == nil) != c.want || c.want && len(m) != 10 {
			t.Errorf("Parse within %d bytes: %d mappings, %v", c.max, len(m), err)
		}
		b, err := readBounded(path)
		if (err == nil) != c.want || c.want && len(b) != len(text) {
			t.Errorf("readBounded within %d bytes: %d bytes, %v", c.max, len(b), err)
		}
	}
}
