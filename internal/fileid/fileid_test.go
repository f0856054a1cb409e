package fileid

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/probee/probee/internal/elfnote"
	"github.com/probee/probee/internal/safeelf"
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
	id, err := Of(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Copies of one build are one ID, whatever their paths.
func TestOfBuildID(t *testing.T) {
	data, want := libc(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.so"), filepath.Join(dir, "b.so")
	write(t, a, data)
	write(t, b, data)
	ida, idb := of(t, a), of(t, b)
	if ida != (ID{BuildID: want}) || idb != ida {
		t.Errorf("copies: %+v and %+v, want both {BuildID: %s}", ida, idb, want)
	}
}

// Files without a build-id are keyed by version: a hard link is the same
// file, a copy or a rewrite is not.
func TestOfVersion(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "script")
	write(t, a, []byte("#!/bin/sh\n"))
	id := of(t, a)
	fi, _ := os.Stat(a)
	if id.BuildID != "" || id.Ino == 0 || id.Size != fi.Size() || id.Mtime != fi.ModTime().UnixNano() {
		t.Fatalf("ID %+v does not describe %+v", id, fi)
	}
	link := filepath.Join(dir, "link")
	if err := os.Link(a, link); err != nil {
		t.Fatal(err)
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
	if got := of(t, dir); got.BuildID != "" || got.Ino == 0 {
		t.Errorf("directory: %+v", got)
	}
}

// The build-id is read once per version: a file changed in place with its
// size and mtime kept is not read again; touching it is.
func TestOfReadsOncePerVersion(t *testing.T) {
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
	if got := of(t, p); got.BuildID != want {
		t.Errorf("same version read again: %+v, want the remembered %s", got, want)
	}
	later := fi.ModTime().Add(time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if got := of(t, p); got.BuildID == want || got.BuildID == "" {
		t.Errorf("new version: %+v, want the changed build-id", got)
	}
}

func TestOfMissing(t *testing.T) {
	if _, err := Of(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Keys tell IDs apart and are file names.
func TestKey(t *testing.T) {
	for _, c := range []struct {
		id   ID
		want string
	}{
		{ID{BuildID: "0a1b"}, "b-0a1b"},
		{ID{Dev: 2049, Ino: 12, Size: 3400, Mtime: 1700000000123456789}, "f-2049-12-3400-1700000000123456789"},
		{ID{}, "f-0-0-0-0"},
	} {
		if got := c.id.Key(); got != c.want {
			t.Errorf("%+v: key %q, want %q", c.id, got, c.want)
		}
	}
}
