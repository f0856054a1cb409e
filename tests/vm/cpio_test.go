package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readNewc parses a newc archive back (enough for the tests).
func readNewc(t *testing.T, b []byte) []entry {
	t.Helper()
	var out []entry
	for off := 0; ; {
		if len(b)-off < 110 || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		field := func(i int) uint64 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		mode, size, major, minor, nameLen := field(1), field(6), field(9), field(10), field(11)
		name := string(b[off+110 : off+110+int(nameLen)-1])
		off = align4(off + 110 + int(nameLen))
		data := b[off : off+int(size)]
		off = align4(off + int(size))
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Errorf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
		out = append(out, entry{name: name, mode: uint32(mode), data: data, rdevMajor: uint32(major), rdevMinor: uint32(minor)})
	}
}

func align4(n int) int { return (n + 3) &^ 3 }

func TestWriteCpio(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "f")
	os.WriteFile(host, []byte("hello"), 0o644)
	in := []entry{
		{name: "dev", mode: modeDir | 0o755},
		{name: "dev/console", mode: modeChar | 0o600, rdevMajor: 5, rdevMinor: 1},
		{name: "etc/x.json", mode: modeFile | 0o644, data: []byte(`{"a":1}`)},
		{name: "bin/sh", mode: modeSymlink | 0o777, data: []byte("dash")},
		{name: "init", mode: modeFile | 0o755, hostPath: host, hostPathSize: 5},
	}
	var buf bytes.Buffer
	open := func(p string) (io.ReadCloser, error) { return os.Open(p) }
	if err := writeCpio(&buf, in, open); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not 4-aligned", buf.Len())
	}
	out := readNewc(t, buf.Bytes())
	if len(out) != len(in) {
		t.Fatalf("read back %d entries, want %d", len(out), len(in))
	}
	want := []string{"", "", `{"a":1}`, "dash", "hello"}
	for i, e := range out {
		if e.name != in[i].name || e.mode != in[i].mode || string(e.data) != want[i] ||
			e.rdevMajor != in[i].rdevMajor || e.rdevMinor != in[i].rdevMinor {
			t.Errorf("entry %d: got %+v, want %+v with data %q", i, e, in[i], want[i])
		}
	}
}

func TestWriteCpioSizeChange(t *testing.T) {
	host := filepath.Join(t.TempDir(), "f")
	os.WriteFile(host, []byte("hello"), 0o644)
	open := func(p string) (io.ReadCloser, error) { return os.Open(p) }
	err := writeCpio(io.Discard, []entry{{name: "f", mode: modeFile, hostPath: host, hostPathSize: 9}}, open)
	if err == nil || !strings.Contains(err.Error(), "changed size") {
		t.Errorf("got %v, want a changed-size error", err)
	}
}
