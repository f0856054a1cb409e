package python

import (
	"debug/elf"

	"github.com/probee/probee/internal/safeelf"
)

// findSymbols looks names up in f's dynamic symbol table, then in its
// symbol table, reading each table's bytes once (bounded by
// internal/safeelf), and returns those it found, defined, by name.
func findSymbols(f *elf.File, names ...string) map[string]safeelf.Sym {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]safeelf.Sym{}
	for _, typ := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_SYMTAB} {
		if len(out) == len(want) {
			break
		}
		lookupIn(f, f.SectionByType(typ), want, out)
	}
	return out
}

// lookupIn adds to out the symbols of table sec named in want, but those
// already there.
func lookupIn(f *elf.File, sec *elf.Section, want map[string]bool, out map[string]safeelf.Sym) {
	size := safeelf.SymSize(f)
	if sec == nil || size == 0 || int(sec.Link) >= len(f.Sections) {
		return
	}
	data, err := safeelf.SectionData("", sec)
	if err != nil || len(data)%size != 0 {
		return
	}
	strs, err := safeelf.SectionData("", f.Sections[sec.Link])
	if err != nil {
		return
	}
	for off := size; off+size <= len(data); off += size {
		s := safeelf.DecodeSym(f, data[off:off+size])
		if s.Shndx == uint16(elf.SHN_UNDEF) || int(s.Name) >= len(strs) {
			continue
		}
		name := cstring(strs[s.Name:])
		if _, done := out[string(name)]; want[string(name)] && !done {
			out[string(name)] = s
		}
	}
}

// cstring is b up to its first NUL (looked up as string(name): no copy).
func cstring(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
