package fileid

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
	"github.com/probee/probee/internal/safefile"
)

// libc returns the bytes and build-id of the system's libc.
func libc(t *testing.T) ([]byte, string) {
	const p = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := safeelf.Open(p)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	id := elfnote.BuildID(f.File)
	data, err := os.ReadFile(p)
	if err != nil || id == "" {
		t.Skipf("%s: no build-id (%v)", p, err)
	}
	return data, id
}

func write(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func of(t *testing.T, p string) ID {
	t.Helper()
	id, f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return id
}

// Two files with one build-id are two IDs: a copy of root's binary with
// its build-id and other bytes must not share its cache entries.
func TestOpenBuildIDNotAlone(t *testing.T) {
	data, want := libc(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.so"), filepath.Join(dir, "b.so")
	write(t, a, data)
	write(t, b, data)
	ida, idb := of(t, a), of(t, b)
	if ida.BuildID != want || idb.BuildID != want {
		t.Errorf("copies: build-ids %q and %q, want %s", ida.BuildID, idb.BuildID, want)
	}
	if ida == idb || ida.Key() == idb.Key() {
		t.Errorf("two files with one build-id share ID %+v (key %s)", ida, ida.Key())
	}
}

// Files without a build-id are keyed by version: a hard link is the same
// file, a copy or a rewrite is not.
func TestOfVersion(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "script")
	write(t, a, []byte("#!/bin/sh\n"))
	link := filepath.Join(dir, "link")
	if err := os.Link(a, link); err != nil { // a new link changes the ctime
		t.Fatal(err)
	}
	id := of(t, a)
	fi, _ := os.Stat(a)
	if id.BuildID != "" || id.Ino == 0 || id.Size != fi.Size() || id.Mtime != fi.ModTime().UnixNano() || id.Ctime == 0 {
		t.Fatalf("ID %+v does not describe %+v", id, fi)
	}
	if got := of(t, link); got != id {
		t.Errorf("hard link: %+v, want %+v", got, id)
	}
	cp := filepath.Join(dir, "copy")
	write(t, cp, []byte("#!/bin/sh\n"))
	if got := of(t, cp); got == id {
		t.Errorf("a copy without a build-id has the original's ID %+v", got)
	}
	write(t, a, []byte("#!/bin/sh\necho rebuilt\n"))
	if got := of(t, a); got == id {
		t.Errorf("rewritten file keeps ID %+v", got)
	}
	if _, _, err := Open(dir); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("directory: %v, want ErrNotRegular", err)
	}
}

// A file changed in place is a new version even with its size and mtime
// restored (its ctime changed): its build-id is read again.
func TestOpenNewVersionOnRewrite(t *testing.T) {
	data, want := libc(t)
	raw, _ := hex.DecodeString(want)
	i := bytes.Index(data, raw)
	if i < 0 {
		t.Skip("build-id bytes not found in libc")
	}
	p := filepath.Join(t.TempDir(), "libc.so")
	write(t, p, data)
	if got := of(t, p); got.BuildID != want {
		t.Fatalf("first read: %+v, want build-id %s", got, want)
	}
	fi, _ := os.Stat(p)
	data[i] ^= 0xff
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data[i:i+1], int64(i)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := of(t, p); got.BuildID == want || got.BuildID == "" {
		t.Errorf("rewritten with mtime restored: %+v, want the changed build-id", got)
	}
}

func TestOpenMissing(t *testing.T) {
	if _, _, err := Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Keys tell IDs apart and are file names.
func TestKey(t *testing.T) {
	for _, c := range []struct {
		id   ID
		want string
	}{
		{ID{BuildID: "0a1b", Dev: 1, Ino: 2, Size: 3, Mtime: 4, Ctime: 5}, "b-0a1b-1-2-3-4-5"},
		{ID{Dev: 2049, Ino: 12, Size: 3400, Mtime: 1700000000123456789, Ctime: 7}, "f-2049-12-3400-1700000000123456789-7"},
		{ID{}, "f-0-0-0-0-0"},
	} {
		if got := c.id.Key(); got != c.want {
			t.Errorf("%+v: key %q, want %q", c.id, got, c.want)
		}
	}
}
