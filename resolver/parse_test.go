package resolver

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/probee/probee/internal/maptest"
)

// buildLdCache writes a new-format ld.so.cache holding entries, optionally
// behind an old-format prefix.
func buildLdCache(entries []LdCacheEntry, oldPrefix bool) []byte {
	var strs bytes.Buffer
	base := ldNewHeader + len(entries)*ldNewEntry
	type offs struct{ k, v uint32 }
	var os []offs
	for _, e := range entries {
		k := base + strs.Len()
		strs.WriteString(e.Name + "\x00")
		v := base + strs.Len()
		strs.WriteString(e.Path + "\x00")
		os = append(os, offs{uint32(k), uint32(v)})
	}
	var b bytes.Buffer
	b.WriteString(ldNewMagic)
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, uint32(len(entries))))
	b.Write(le.AppendUint32(nil, uint32(strs.Len())))
	b.Write(make([]byte, 4+4+12))
	for i, e := range entries {
		b.Write(le.AppendUint32(nil, uint32(e.Flags)))
		b.Write(le.AppendUint32(nil, os[i].k))
		b.Write(le.AppendUint32(nil, os[i].v))
		b.Write(le.AppendUint32(nil, 0))
		b.Write(le.AppendUint64(nil, e.HWCap))
	}
	b.Write(strs.Bytes())
	if !oldPrefix {
		return b.Bytes()
	}
	old := append([]byte(ldOldMagic+"\x00"), le.AppendUint32(nil, 1)...)
	old = append(old, make([]byte, ldOldEntry)...)
	for len(old)%8 != 0 {
		old = append(old, 0)
	}
	return append(old, b.Bytes()...)
}

var sampleLd = []LdCacheEntry{
	{Name: "libc.so.6", Path: "/lib/x86_64-linux-gnu/libc.so.6", Flags: 0x0303},
	{Name: "libc.so.6", Path: "/lib32/libc.so.6", Flags: 0x0003},
	{Name: "libcrypto.so.3", Path: "/lib/x86_64-linux-gnu/libcrypto.so.3", Flags: 0x0303},
}

func TestParseLdCache(t *testing.T) {
	for _, old := range []bool{false, true} {
		got, err := ParseLdCache(buildLdCache(sampleLd, old))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, sampleLd) {
			t.Errorf("old=%v: got %+v", old, got)
		}
	}
	for _, bad := range [][]byte{nil, []byte("glibc-ld.so.cache1.1"), buildLdCache(sampleLd, false)[:60], []byte(ldOldMagic + "\x00\xff\xff\xff\x7f")} {
		if _, err := ParseLdCache(bad); err == nil {
			t.Errorf("ParseLdCache(%q) succeeded", bad)
		}
	}
}

func TestRealLdCache(t *testing.T) {
	es, err := ReadLdCache("/etc/ld.so.cache")
	if err != nil {
		t.Skipf("no readable ld.so.cache: %v", err)
	}
	found := false
	for _, e := range es {
		if e.Name == "libc.so.6" && e.nativeEntry() && strings.HasSuffix(e.Path, "/libc.so.6") {
			found = true
		}
	}
	if !found {
		t.Errorf("no native libc.so.6 among %d entries", len(es))
	}
}

// TestFakeRoot resolves a library name through a fake root's ld.so.cache.
func TestFakeRoot(t *testing.T) {
	root := t.TempDir()
	lib := maptest.Fixture(t, "libfx.so")
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	os.MkdirAll(filepath.Join(root, "opt/lib"), 0o755)
	b, _ := os.ReadFile(lib)
	os.WriteFile(filepath.Join(root, "opt/lib/libfx.so"), b, 0o644)
	os.WriteFile(filepath.Join(root, "opt/lib/libfxother.so"), b, 0o644)
	cache := buildLdCache([]LdCacheEntry{
		{Name: "libfx.so", Path: "/opt/lib/libfx.so", Flags: 0x0303},
		{Name: "libfxother.so", Path: "/opt/lib/libfxother.so", Flags: 0x0303},
	}, false)
	os.WriteFile(filepath.Join(root, "etc/ld.so.cache"), cache, 0o644)
	ts := resolveOK(t, uspec(libT("fx"), 1, "fx_entry"), Scope{Root: root})
	if len(ts) != 1 || ts[0].Path != filepath.Join(root, "opt/lib/libfx.so") {
		t.Errorf("fx:fx_entry = %v", lines(ts))
	}
}
