package objfile

import (
	"debug/elf"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/probee/probee/internal/safeelf"
)

// The symbol and dynamic tables are read here from section bytes, not
// with debug/elf's Symbols, DynamicSymbols and DynString (see the package
// doc). debug/elf still parses the headers and reads the bytes.

// sectionTables reads the string tables of one ELF file once each.
type sectionTables struct {
	f    *elf.File
	strs map[uint32]strtab // by section index
}

type strtab struct {
	s  string
	ok bool
}

func newSectionTables(f *elf.File) *sectionTables {
	return &sectionTables{f: f, strs: map[uint32]strtab{}}
}

// sectionData returns the bytes of s; false when they cannot be read
// (SHT_NOBITS included: debug/elf refuses to read those too).
func sectionData(s *elf.Section) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	b, err := safeelf.SectionData("", s)
	return b, err == nil
}

// stringTable returns the section at index link as a string; ok is false
// when the link is out of range (0 is SHN_UNDEF, never a string table) or
// the section cannot be read.
func (t *sectionTables) stringTable(link uint32) (string, bool) {
	if link == 0 || int(link) >= len(t.f.Sections) {
		return "", false
	}
	st, done := t.strs[link]
	if !done {
		st.s, st.ok = readString(t.f.Sections[link])
		t.strs[link] = st
	}
	return st.s, st.ok
}

// readString reads section s straight into a string (Data, then string(),
// would hold two copies of libLLVM's 3 MB of names). Its size is trusted
// for the first 4 MB only: past that the string grows as bytes arrive, so
// a header claiming more than the file holds costs no more than the file.
func readString(s *elf.Section) (string, bool) {
	if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_COMPRESSED != 0 {
		b, ok := sectionData(s)
		return string(b), ok
	}
	var b strings.Builder
	b.Grow(int(min(s.Size, 4<<20)))
	n, err := io.Copy(&b, io.LimitReader(s.Open(), int64(min(s.Size, math.MaxInt64))))
	if err != nil || uint64(n) != s.Size {
		return "", false
	}
	return b.String(), true
}

// symString returns the NUL-terminated string at off in a string table
// (ldcache.go's cString, over a string: names stay substrings of it); ok is false
// when off is out of range or the string is not terminated.
func symString(strs string, off uint64) (s string, ok bool) {
	if off >= uint64(len(strs)) {
		return "", false
	}
	n := strings.IndexByte(strs[off:], 0)
	if n < 0 {
		return "", false
	}
	return strs[off : off+uint64(n)], true
}

// isCode reports whether r is a defined function (STT_FUNC, STT_GNU_IFUNC)
// with a non-zero address in an executable section.
func isCode(f *elf.File, r safeelf.Sym) bool {
	return r.IsFunc() && r.Value != 0 && execSection(f, elf.SectionIndex(r.Shndx))
}

// addSymbols appends the functions of the first section of type typ
// (SHT_DYNSYM or SHT_SYMTAB) to o.Funcs, and its code labels to o.labels
// (labels.go). ok is false when f has no such table or it is malformed
// (debug/elf's Symbols would have failed).
func (o *Object) addSymbols(t *sectionTables, typ elf.SectionType, from uint8) (ok bool) {
	sec := t.f.SectionByType(typ)
	size := safeelf.SymSize(t.f)
	if sec == nil || size == 0 {
		return false
	}
	data, ok := sectionData(sec)
	if !ok || len(data) < size || len(data)%size != 0 {
		return false
	}
	strs, ok := t.stringTable(sec.Link)
	if !ok {
		return false
	}
	data = data[size:] // record 0 is the undefined symbol
	n := 0
	for off := 0; off < len(data); off += size {
		r := safeelf.DecodeSym(t.f, data[off:off+size])
		if isCode(t.f, r) {
			n++
		} else if elf.ST_TYPE(r.Info) == elf.STT_NOTYPE {
			name, _ := symString(strs, uint64(r.Name))
			if l, ok := labelOf(t.f, r, name); ok {
				o.labels = append(o.labels, l)
			}
		}
	}
	if n == 0 {
		return true
	}
	o.Funcs = slices.Grow(o.Funcs, n)
	for off := 0; off < len(data); off += size {
		r := safeelf.DecodeSym(t.f, data[off:off+size])
		if !isCode(t.f, r) {
			continue
		}
		if name, _ := symString(strs, uint64(r.Name)); name != "" {
			b := elf.ST_BIND(r.Info)
			o.Funcs = append(o.Funcs, Symbol{Name: name, Addr: r.Value, Size: r.Size, from: from,
				Global: b == elf.STB_GLOBAL || b == elf.STB_WEAK})
		}
	}
	return true
}

func execSection(f *elf.File, idx elf.SectionIndex) bool {
	if idx == elf.SHN_UNDEF || idx == elf.SHN_ABS || int(idx) >= len(f.Sections) {
		return false
	}
	return f.Sections[idx].Flags&elf.SHF_EXECINSTR != 0
}

// dynStrings returns the strings the SHT_DYNAMIC section's entries tagged
// tag point at (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH), in order.
func (t *sectionTables) dynStrings(tag elf.DynTag) []string {
	sec := t.f.SectionByType(elf.SHT_DYNAMIC)
	if sec == nil {
		return nil
	}
	size := 16
	if t.f.Class == elf.ELFCLASS32 {
		size = 8
	}
	d, ok := sectionData(sec)
	strs, sok := t.stringTable(sec.Link)
	if !ok || !sok || len(d)%size != 0 {
		return nil
	}
	var out []string
	bo := t.f.ByteOrder
	for ; len(d) >= size; d = d[size:] {
		var k elf.DynTag
		var v uint64
		if size == 8 {
			k, v = elf.DynTag(bo.Uint32(d[0:4])), uint64(bo.Uint32(d[4:8]))
		} else {
			k, v = elf.DynTag(bo.Uint64(d[0:8])), bo.Uint64(d[8:16])
		}
		if k != tag {
			continue
		}
		if s, ok := symString(strs, v); ok {
			out = append(out, s)
		}
	}
	return out
}
