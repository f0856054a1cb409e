package resolver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
)

// LdCacheEntry is one library of /etc/ld.so.cache.
type LdCacheEntry struct {
	Name  string // the soname, e.g. "libc.so.6"
	Path  string // the file, e.g. "/lib/x86_64-linux-gnu/libc.so.6"
	Flags int32  // glibc FLAG_* bits (type and architecture)
	HWCap uint64
}

const (
	ldOldMagic  = "ld.so-1.7.0"
	ldNewMagic  = "glibc-ld.so.cache1.1"
	ldNewHeader = 48 // magic+version(20) nlibs(4) strlen(4) flags(1) pad(3) ext(4) unused(12)
	ldNewEntry  = 24 // flags(4) key(4) value(4) osversion(4) hwcap(8)
	ldOldEntry  = 12 // flags(4) key(4) value(4)

	ldFlagTypeMask  = 0x00ff
	ldFlagELFLibc6  = 0x0003
	ldFlagArchMask  = 0xff00
	ldFlagX8664     = 0x0300
	ldFlagAArch64   = 0x0a00
	ldMaxLibEntries = 1 << 20
)

// ErrBadLdCache is wrapped by ParseLdCache errors.
var ErrBadLdCache = errors.New("malformed ld.so.cache")

// ReadLdCache parses the cache file at path.
func ReadLdCache(path string) ([]LdCacheEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e, err := ParseLdCache(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (run ldconfig to rebuild it)", path, err)
	}
	return e, nil
}

// ParseLdCache parses glibc's ld.so.cache in the new format
// ("glibc-ld.so.cache1.1"), alone or after an old-format ("ld.so-1.7.0")
// prefix. String offsets are relative to the start of the new-format
// header. Only the new format is read: glibc has written it since 2.2.
func ParseLdCache(b []byte) ([]LdCacheEntry, error) {
	start := 0
	if bytes.HasPrefix(b, []byte(ldOldMagic)) {
		if len(b) < 16 {
			return nil, fmt.Errorf("%w: truncated old header", ErrBadLdCache)
		}
		n := uint64(binary.LittleEndian.Uint32(b[12:]))
		off := 16 + n*ldOldEntry
		off = (off + 7) &^ 7
		if off > uint64(len(b)) {
			return nil, fmt.Errorf("%w: old-format entries run past the end", ErrBadLdCache)
		}
		start = int(off)
	}
	nb := b[start:]
	if !bytes.HasPrefix(nb, []byte(ldNewMagic)) || len(nb) < ldNewHeader {
		return nil, fmt.Errorf("%w: no %q header", ErrBadLdCache, ldNewMagic)
	}
	bo := binary.LittleEndian // the cache is in host order; probee runs on little-endian hosts
	n := uint64(bo.Uint32(nb[20:]))
	if n > ldMaxLibEntries || ldNewHeader+n*ldNewEntry > uint64(len(nb)) {
		return nil, fmt.Errorf("%w: %d entries do not fit in %d bytes", ErrBadLdCache, n, len(nb))
	}
	out := make([]LdCacheEntry, 0, n)
	for i := range n {
		e := nb[ldNewHeader+i*ldNewEntry:]
		key, ok1 := cString(nb, bo.Uint32(e[4:]))
		val, ok2 := cString(nb, bo.Uint32(e[8:]))
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: entry %d has a string offset out of range", ErrBadLdCache, i)
		}
		out = append(out, LdCacheEntry{Name: key, Path: val, Flags: int32(bo.Uint32(e)), HWCap: bo.Uint64(e[16:])})
	}
	return out, nil
}

// cString returns the NUL-terminated string at off in b.
func cString(b []byte, off uint32) (string, bool) {
	if uint64(off) >= uint64(len(b)) {
		return "", false
	}
	end := bytes.IndexByte(b[off:], 0)
	if end < 0 {
		return "", false
	}
	return string(b[off : int(off)+end]), true
}

// nativeEntry reports whether e is a glibc library for this machine's
// architecture (ld.so.cache also lists i386 and x32 libraries).
func (e LdCacheEntry) nativeEntry() bool {
	if e.Flags&ldFlagTypeMask != ldFlagELFLibc6 {
		return false
	}
	switch runtime.GOARCH {
	case "amd64":
		return e.Flags&ldFlagArchMask == ldFlagX8664
	case "arm64":
		return e.Flags&ldFlagArchMask == ldFlagAArch64
	}
	return true
}
